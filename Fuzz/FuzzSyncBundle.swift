// libFuzzer entry point for `sync import`: the bundle header parser and the
// store plaintext that an import merges. Built by scripts/fuzz.sh with
// TaskCrypto and TaskVault. The payload is authenticated with AES-GCM, which
// the fuzzer cannot forge, so the harness also feeds its input straight to
// the store decoder that runs behind the tag. Properties:
//   - the bundle parser never crashes and fails only with a TaskVaultError;
//   - the store decoder fails only with a ParseFailure, and what it accepts
//     re-encodes to the same bytes (one spelling per store).

import TaskCrypto

@testable import TaskVault

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let raw = UnsafeRawBufferPointer(start: data, count: size)
  let body = Array(raw)
  do {
    _ = try SyncBundle.parse(body + SHA256.hash(data: body).bytes, path: "fuzz")
  } catch is TaskVaultError {
  } catch {
    preconditionFailure("unexpected error type \(error)")
  }

  guard size > 0, let plaintext = try? SecureBytes(copying: raw) else { return 0 }
  for store in [StoreID.synchronisable, .deviceOnly] {
    do {
      let contents = try StoreContents.decode(plaintext, store: store)
      let again = try contents.encode()
      let same = again.withUnsafeBytes { $0.elementsEqual(raw) }
      precondition(same, "a store plaintext was accepted in a non-canonical form")
    } catch is ParseFailure {
    } catch {
      preconditionFailure("unexpected error type \(error)")
    }
  }
  return 0
}
