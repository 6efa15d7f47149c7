// libFuzzer entry point for the sealed-value reader and the base64 codec.
// Compiled into one module with TaskCrypto's sources by scripts/fuzz.sh, so
// internal helpers are reachable. Properties checked on every input:
//   - open never crashes and never returns a marked value as plain text;
//   - base64 decode succeeds only on the canonical spelling of its output.
// The key-file parser has its own harness, FuzzKeyFile.swift.

@testable import TaskCrypto

private let fuzzKeyring: Keyring = {
  let key = NoteKey(id: KeyID(rawValue: 0x0a0b_0c0d), key: try! SymmetricKey(bytes: SecureBytes(zeroedCount: 32)))
  return Keyring(primary: key)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = UnsafeRawBufferPointer(start: data, count: size)
  let text = String(decoding: bytes, as: UTF8.self)

  do {
    let opened = try SealedValue.open(text, using: fuzzKeyring, context: "fuzz")
    if SealedValue.isSealed(text) {
      // Opening a marked value needs a tag forged under the all-zero key:
      // it must have authenticated, so it cannot be the input returned as plain.
      precondition(opened != text || text.isEmpty, "a sealed value came back as plain text")
    } else {
      precondition(opened == text, "a plain value changed")
    }
  } catch is TaskCryptoError {
    precondition(SealedValue.isSealed(text), "a plain value raised an error")
  } catch {
    preconditionFailure("unexpected error type \(error)")
  }

  if let decoded = Base64.decode(bytes) {
    precondition(Array(Base64.encode(decoded).utf8) == Array(bytes), "base64 accepted a non-canonical spelling")
  }

  return 0
}
