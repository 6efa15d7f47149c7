// libFuzzer entry point for assistant-key strings and the registry parsers
// (version 1 and version 2).
// Built by scripts/fuzz.sh with TaskCrypto, TaskVault and AssistantKeys in

//   - a presented key is accepted only if it has the documented grammar;
//   - raw registry bytes never pass authentication;
//   - input authenticated under the fuzzer's own key either parses to a
//     registry that re-encodes to the same bytes, or is refused as damaged;
//   - version 2: the input made into a file whose header and in-bounds
//     records are re-MACed under the fuzzer's key; a full read that accepts
//     it re-encodes to the same bytes and every verify search finds exactly
//     the entry the full read gave; a search never returns an entry for
//     another digest, and nothing but AssistantKeyError is thrown;
//   - last-used version 2: raw bytes never pass the header MAC; with the
//     header re-MACed under the fuzzer's key, a full read that accepts the
//     file finds, by binary search, the very slot it read for every id.

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
  fuzzVersion2(raw)
  fuzzLastUsedVersion2(raw)
  return 0
}

/// The input as a version-2 file: the version line forced, the header and
/// every record an index entry points at inside the file re-MACed.
private func resealedVersion2(_ raw: [UInt8]) -> [UInt8] {
  typealias V2 = RegistryFormatV2
  var file = V2.versionLine + Array(raw.dropFirst(V2.versionLine.count))
  if file.count < V2.headerByteCount { file += [UInt8](repeating: 0, count: V2.headerByteCount - file.count) }
  let generation = V2.integer(file, at: 34, count: 8)
  let count = min(Int(V2.integer(file, at: 42, count: 4)), (file.count - V2.headerByteCount) / V2.entryByteCount)
  for index in 0..<count {
    let start = V2.headerByteCount + V2.entryByteCount * index
    let offset = V2.integer(file, at: start + 32, count: 8)
    let length = Int(V2.integer(file, at: start + 40, count: 4))
    guard length > V2.macByteCount, offset <= UInt64(file.count), UInt64(length) <= UInt64(file.count) - offset else {
      continue
    }
    let bodyEnd = Int(offset) + length - V2.macByteCount
    var mac = HMACSHA256(key: fuzzRegistryKey)
    mac.update(data: V2.recordLabel)
    mac.update(data: (0..<8).map { UInt8(truncatingIfNeeded: generation >> UInt64(56 - 8 * $0)) })
    mac.update(data: Array(file[V2.fileIDOffset..<(V2.fileIDOffset + V2.fileIDByteCount)]))
    mac.update(data: Array(file[Int(offset)..<bodyEnd]))
    file.replaceSubrange(bodyEnd..<(bodyEnd + V2.macByteCount), with: mac.finalize())
  }
  var mac = HMACSHA256(key: fuzzRegistryKey)
  mac.update(data: V2.headerLabel)
  mac.update(data: Array(file[0..<V2.macOffset]))
  file.replaceSubrange(V2.macOffset..<V2.headerByteCount, with: mac.finalize())
  return file
}

private func fuzzVersion2(_ raw: [UInt8]) {
  // Unauthenticated bytes: no search returns an entry.
  let probe = SHA256.hash(data: raw)
  do {
    if try RegistryReading.lookup(probe, in: raw, key: fuzzRegistryKey) != nil {
      preconditionFailure("an unauthenticated registry answered a search")
    }
  } catch is AssistantKeyError {
  } catch {
    preconditionFailure("unexpected error type \(error)")
  }
  let file = resealedVersion2(raw)
  var digests = [probe]
  for index in 0..<min(8, (file.count - RegistryFormatV2.headerByteCount) / RegistryFormatV2.entryByteCount) {
    let start = RegistryFormatV2.headerByteCount + RegistryFormatV2.entryByteCount * index
    digests.append(SHA256Digest(bytes: Array(file[start..<(start + 32)]))!)
  }
  var full: RegistryIndex?
  do {
    let contents = try RegistryReading.decode(file, key: fuzzRegistryKey)
    precondition(
      RegistryFormatV2.encode(
        contents, key: fuzzRegistryKey,
        fileID: Array(file[RegistryFormatV2.fileIDOffset..<(RegistryFormatV2.fileIDOffset + 16)])) == file,
      "a v2 registry in a non-canonical form")
    full = RegistryIndex(contents)
    digests += contents.entries.prefix(8).map(\.digest)
  } catch is AssistantKeyError {
  } catch {
    preconditionFailure("unexpected error type \(error)")
  }
  for digest in digests {
    do {
      let found = try RegistryReading.lookup(digest, in: file, key: fuzzRegistryKey)
      precondition(found == nil || found?.digest == digest, "a search returned another digest's entry")
      if let full { precondition(found == full.entry(for: digest), "a search and the full read disagree") }
    } catch is AssistantKeyError {
      precondition(full == nil, "a search refused a registry the full read accepted")
    } catch {
      preconditionFailure("unexpected error type \(error)")
    }
  }
}

private func fuzzLastUsedVersion2(_ raw: [UInt8]) {
  typealias V2 = LastUsedFormatV2
  do {
    _ = try V2.decode(raw, key: fuzzRegistryKey)
    preconditionFailure("an unauthenticated last-used file was accepted")
  } catch is AssistantKeyError {
  } catch {
    preconditionFailure("unexpected error type \(error)")
  }
  var file = V2.versionLine + Array(raw.dropFirst(V2.versionLine.count))
  if file.count < V2.headerByteCount { file += [UInt8](repeating: 0, count: V2.headerByteCount - file.count) }
  var mac = HMACSHA256(key: fuzzRegistryKey)
  mac.update(data: V2.headerLabel)
  mac.update(data: Array(file[0..<V2.macOffset]))
  file.replaceSubrange(V2.macOffset..<V2.headerByteCount, with: mac.finalize())
  let slots: [(id: UInt64, time: Int64?, stamp: ArraySlice<UInt8>)]
  do {
    slots = try V2.slots(file, key: fuzzRegistryKey)
  } catch is AssistantKeyError {
    return
  } catch {
    preconditionFailure("unexpected error type \(error)")
  }
  let source = RegistrySource(file)
  for (index, slot) in slots.enumerated().prefix(16) {
    do {
      let found = try V2.find(slot.id, in: source, count: slots.count)
      precondition(found?.index == index, "the search and the full read disagree on a slot")
    } catch {
      preconditionFailure("a search refused a file the full read accepted: \(error)")
    }
  }
}
