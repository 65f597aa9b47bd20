func.func @main() {ÿþ }
