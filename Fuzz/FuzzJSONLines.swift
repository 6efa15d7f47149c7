// libFuzzer entry point for the batch reader of `rewrap` and `retire`
// (plain lines and JSON lines). Built by scripts/fuzz.sh with every library
// module and TaskKeyCLI. Properties:
//   - reading never crashes and fails only with a CLIError;
//   - plain lines are kept byte for byte: joined again they are the input;
//   - a JSON line written back with its own value parses to that value.

@testable import TaskKeyCLI

private func batch(_ words: [String]) -> ValueBatch {
  var arguments = Arguments(words, usage: "fuzz")
  return try! ValueBatch(parsing: &arguments)
}

private let plain = batch([])
private let json = batch(["--field", "v", "--context-field", "c"])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let input = Array(UnsafeRawBufferPointer(start: data, count: size))
  do {
    let lines = try plain.lines(of: input)
    let joined = lines.map { Array($0.raw.utf8) }.joined(separator: [UInt8(ascii: "\n")])
    precondition(
      Array(joined) == input || Array(joined) + [UInt8(ascii: "\n")] == input, "plain lines changed bytes")
  } catch is CLIError {
  } catch {
    preconditionFailure("unexpected error type \(error)")
  }
  do {
    for line in try json.lines(of: input) {
      guard let value = line.value else { continue }
      let again = try json.lines(of: Array(try json.render(line, newValue: value).utf8))
      precondition(again.count == 1 && again[0].value == value, "a JSON line changed its value")
    }
  } catch is CLIError {
  } catch {
    preconditionFailure("unexpected error type \(error)")
  }
  return 0
}
