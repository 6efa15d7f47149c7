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

private let passphrase = fuzzPassphrase("correct horse battery staple")

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
    _ = try BackupFile.open(bytes, passphrase: passphrase, path: "fuzz")
  } catch is BackupError {
  } catch {
    preconditionFailure("unexpected error type \(error)")
  }
  return 0
}
