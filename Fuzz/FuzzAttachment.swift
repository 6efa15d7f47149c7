// libFuzzer entry point for the attachment readers (`attach open`, the
// random-access `AttachmentReader`) and the attachment settings file.
// Built by scripts/fuzz.sh with TaskSystem, TaskCrypto and TaskAttachments,
// seeded from Vectors/attachment-v1.json and opened with that file's keys.
// Properties checked on every input:
//   - neither reader crashes, and each fails only with an AttachmentError;
//   - an input without the magic is plain and comes back byte for byte;
//   - the stream reader (fed in pieces whose size the input picks) and the
//     random-access reader agree: both refuse, or both open to the same
//     plaintext, of the length the random-access reader authenticated;
//   - the settings parser accepts only the two lines it writes.

import Glibc
import TaskCrypto

@testable import TaskAttachments

private let keyring: Keyring = {
  let lines = [
    "0a0b0c0d:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
    "deadbeef:202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f",
  ]
  let keys = lines.map { line in try! Array(line.utf8).withUnsafeBytes { try NoteKey.parseKeyFile($0) } }
  return try! Keyring(keys: keys, primaryID: keys[0].id)
}()

/// The record every seed vector was sealed for is `attachment/1`, so
/// mutations of a valid seed reach the chunk checks, not just the context.
private let record = "attachment/1"

/// One scratch file per process for the random-access reader.
private let scratch = "/tmp/taskkey-fuzz-attachment-\(getpid())"

private func streamOpen(_ bytes: [UInt8], step: Int) -> (sealed: Bool, output: [UInt8])? {
  var offset = 0
  var output = [UInt8]()
  do {
    let summary = try Attachment.open(
      reading: { buffer in
        let count = min(buffer.count, step, bytes.count - offset)
        bytes[offset..<(offset + count)].withUnsafeBytes { buffer.copyMemory(from: $0) }
        offset += count
        return count
      }, writing: { output += $0 }, using: keyring, record: record)
    precondition(summary.plaintextByteCount == UInt64(output.count), "the summary miscounted the output")
    return (summary.isSealed, output)
  } catch is AttachmentError {
    return nil
  } catch {
    preconditionFailure("unexpected error type from the stream reader: \(error)")
  }
}

private func randomAccessOpen(_ bytes: [UInt8]) -> (sealed: Bool, output: [UInt8])? {
  let fd = open(scratch, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
  precondition(fd >= 0, "cannot write the scratch file")
  let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
  close(fd)
  precondition(written == bytes.count, "short write to the scratch file")
  do {
    let reader = try AttachmentReader(path: scratch, keyring: keyring, record: record)
    let output = try reader.read(offset: 0, count: Int(reader.byteCount))
    return (reader.isSealed, output)
  } catch is AttachmentError {
    return nil
  } catch {
    preconditionFailure("unexpected error type from the random-access reader: \(error)")
  }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  if let settings = try? AttachmentSettings(fileContents: bytes, path: "settings") {
    precondition(settings.fileContents == bytes, "the settings file was accepted in another spelling")
  }
  let step = 1 + (bytes.last.map(Int.init) ?? 0) * 67
  let streamed = streamOpen(bytes, step: step)
  let random = randomAccessOpen(bytes)
  if !Attachment.isSealed(prefix: bytes.prefix(Attachment.magic.count)) {
    precondition(streamed?.sealed == false && streamed?.output == bytes, "a plain input did not pass through")
    precondition(random?.sealed == false && random?.output == bytes, "a plain file did not read as it is")
    return 0
  }
  precondition(streamed?.sealed != false && random?.sealed != false, "an input with the magic was taken for plain")
  precondition(
    (streamed == nil) == (random == nil) && streamed?.output == random?.output,
    "the stream and random-access readers disagree")
  return 0
}
