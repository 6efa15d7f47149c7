// libFuzzer entry point for the key-file parser (`--key-file`, `keygen`).
// Built by scripts/fuzz.sh with TaskCrypto. Properties checked on every
// input:
//   - parsing never crashes and fails only with a TaskCryptoError;
//   - an accepted file is the canonical line '<8 hex>:<64 hex>' with an
//     optional final newline: re-encoding the key gives the same bytes.

@testable import TaskCrypto

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = UnsafeRawBufferPointer(start: data, count: size)
  let key: NoteKey
  do {
    key = try NoteKey.parseKeyFile(bytes)
  } catch is TaskCryptoError {
    return 0
  } catch {
    preconditionFailure("unexpected error type \(error)")
  }
  let line = try! key.keyFileBytes()
  let same = line.withUnsafeBytes { line in
    bytes.count == line.count ? bytes.elementsEqual(line) : bytes.elementsEqual(line.dropLast())
  }
  precondition(same, "a key file was accepted in a non-canonical spelling")
  return 0
}
