// libFuzzer entry point for assistant-key strings and the registry parser.
// Built by scripts/fuzz.sh with TaskCrypto, TaskVault and AssistantKeys in

//   - a presented key is accepted only if it has the documented grammar;
//   - raw registry bytes never pass authentication;
//   - input authenticated under the fuzzer's own key either parses to a
//     registry that re-encodes to the same bytes, or is refused as damaged.

import TaskCrypto

@testable import AssistantKeys

private let fuzzRegistryKey: SymmetricKey = {
  let bytes = [UInt8](repeating: 0x42, count: 32)
  return try! bytes.withUnsafeBytes { try SymmetricKey(copying: $0) }
}()

private func isKeyGrammar(_ bytes: UnsafeRawBufferPointer) -> Bool {
  guard bytes.count == 52, Array(bytes.prefix(3)) == Array("tk_".utf8) else { return false }
  return bytes.dropFirst(3).allSatisfy { byte in
    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
  }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = UnsafeRawBufferPointer(start: data, count: size)
  if (try? AssistantKey.check(bytes)) != nil {
    precondition(isKeyGrammar(bytes), "a key outside the grammar passed the check")
  }

  let raw = Array(bytes)
  do {
    _ = try RegistryFormat.decode(raw, key: fuzzRegistryKey)
    preconditionFailure("unauthenticated registry bytes were accepted")
  } catch is AssistantKeyError {
  } catch {
    preconditionFailure("unexpected error type \(error)")
  }

  let lines = String(decoding: raw, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    .map(String.init)
  let sealed = AuthenticatedFile.seal(header: RegistryFormat.header, lines: lines, key: fuzzRegistryKey)
  do {
    let contents = try RegistryFormat.decode(sealed, key: fuzzRegistryKey)
    precondition(
      RegistryFormat.encode(contents, key: fuzzRegistryKey) == sealed, "a registry parsed in a non-canonical form")
  } catch is AssistantKeyError {
  } catch {
    preconditionFailure("unexpected error type \(error)")
  }
  return 0
}
