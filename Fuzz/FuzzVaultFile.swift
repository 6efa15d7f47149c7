// libFuzzer entry point for the vault-file and sync-bundle readers. Built by
// scripts/fuzz.sh with TaskCrypto and TaskVault in one module. The input gets
// a correct trailing SHA-256 appended, so the fuzzer reaches the structural
// checks behind the checksum instead of stopping at it. Properties: never a
// crash, never an untyped error, and nothing opens without the passphrase
// that made it (the fuzzer cannot forge a GCM tag).

import TaskCrypto

@testable import TaskVault

private let passphrase = fuzzPassphrase("fuzz passphrase")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let body = Array(UnsafeRawBufferPointer(start: data, count: size))
  guard !costlyKDF(body, at: 0) else { return 0 }
  let file = body + SHA256.hash(data: body).bytes
  let readers: [([UInt8], SecureBytes) throws -> VaultContents] = [
    { try VaultFileReader.openVaultFile($0, passphrase: $1) },
    { try VaultFileReader.openSyncBundle($0, passphrase: $1) },
  ]
  for open in readers {
    do {
      _ = try open(file, passphrase)
      preconditionFailure("a fuzzed file opened")
    } catch is TaskVaultError {
    } catch is TaskCryptoError {
    } catch {
      preconditionFailure("unexpected error type \(error)")
    }
  }
  return 0
}
