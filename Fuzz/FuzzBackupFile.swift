// libFuzzer entry point for the backup-file reader (`backup restore`,
// `backup verify`). Built by scripts/fuzz.sh with TaskCrypto, TaskVault,
// AssistantKeys and BackupRules. The harness rewrites the SHA-256 trailer of
// the vault file inside (bytes 46 up to the backup tag) so the fuzzer gets
// past that checksum to the structure behind it, and uses the passphrase of
// the seed vectors, so mutated inputs reach the KDF, the store decoder and
// the backup tag. Properties: never a crash, never an error other than
// BackupError.

import TaskCrypto

@testable import BackupRules

private let fuzzPassphrase: SecureBytes = {
  let bytes = Array("correct horse battery staple".utf8)
  return try! bytes.withUnsafeBytes { try SecureBytes(copying: $0) }
}()

/// Whether the KDF costs in a vault-family header at `offset` are above
/// t = 3, m = 64 MiB. Such inputs are skipped: a 4 GiB Argon2id run would
/// only measure libsodium (the caps are proved by unit tests), and would
/// trip libFuzzer's memory limit.
private func costlyKDF(_ bytes: [UInt8], at offset: Int) -> Bool {
  guard bytes.count >= offset + 36 else { return false }
  let number = { (start: Int) in bytes[(offset + start)..<(offset + start + 4)].reduce(0) { $0 << 8 | UInt32($1) } }
  return number(28) > 3 || number(32) > 65_536
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  var bytes = Array(UnsafeRawBufferPointer(start: data, count: size))
  guard !costlyKDF(bytes, at: BackupFile.headerByteCount) else { return 0 }
  let tagStart = bytes.count - BackupFile.tagByteCount
  if tagStart - BackupFile.headerByteCount > 64 {
    let inner = BackupFile.headerByteCount..<tagStart
    let body = Array(bytes[inner.lowerBound..<(inner.upperBound - 32)])
    bytes.replaceSubrange((inner.upperBound - 32)..<inner.upperBound, with: SHA256.hash(data: body).bytes)
  }
  do {
    _ = try BackupFile.open(bytes, passphrase: fuzzPassphrase, path: "fuzz")
  } catch is BackupError {
  } catch {
    preconditionFailure("unexpected error type \(error)")
  }
  return 0
}
