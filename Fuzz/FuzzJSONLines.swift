// libFuzzer entry point for the JSON-lines scanner of `rewrap`, `retire` and
// `seal`/`open --field`. Built by scripts/fuzz.sh with every library module
// and TaskKeyCLI. Properties:
//   - scanning never crashes and fails only with JSONLine.Malformed;
//   - a line whose field holds a string, written back with that value put in
//     place of the field's token, scans to the same value, with every byte
//     outside the token unchanged.

@testable import TaskKeyCLI

private let names = ["v", "c"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let input = UnsafeRawBufferPointer(start: data, count: size)
  let members: [JSONLine.Member]
  do {
    members = try JSONLine.members(of: input, named: names)
  } catch is JSONLine.Malformed {
    return 0
  } catch {
    preconditionFailure("unexpected error type \(error)")
  }
  guard case .string(let value, let token) = members[0] else { return 0 }
  var rendered = Array(input[..<token.lowerBound])
  JSONLine.encode(value, into: &rendered)
  let tokenEnd = rendered.count
  rendered += input[token.upperBound...]
  let again = rendered.withUnsafeBytes { try? JSONLine.members(of: $0, named: names) }
  guard case .string(let second, let secondToken)? = again?[0] else {
    preconditionFailure("a JSON line with its own value written back does not scan")
  }
  precondition(second == value, "a JSON line changed its value")
  precondition(secondToken == token.lowerBound..<tokenEnd, "the value moved")
  return 0
}
