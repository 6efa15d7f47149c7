import Testing

@testable import TaskSystem

/// `CommandLineBytes.decode`: the one decoder of both commands' process
/// edge, which refuses bytes that are not UTF-8 instead of repairing them.
@Suite("Command-line bytes: UTF-8 or refused, never repaired")
struct CommandLineBytesTests {
  @Test func valuesDecodeAndAnEntryWithoutEqualsIsLeftOut() {
    let decoded = CommandLineBytes.decode(
      arguments: [Array("seal".utf8), Array("é".utf8)], environment: [Array("HOME=/h".utf8), Array("NOEQUALS".utf8)],
      checking: ["HOME"])
    #expect(decoded.arguments == ["seal", "é"])
    #expect(decoded.environment == ["HOME": "/h"])
    #expect(decoded.refusal == nil)
  }

  @Test func aCheckedVariableIsRefusedBeforeAnArgumentAndAnUncheckedOneIsLeftOut() {
    let bad: [UInt8] = [0x66, 0xFF]
    let decoded = CommandLineBytes.decode(
      arguments: [Array("a".utf8), bad], environment: [Array("OTHER=".utf8) + bad, Array("HOME=".utf8) + bad],
      checking: ["HOME"])
    #expect(decoded.refusal == .environmentVariable("HOME"))
    #expect(decoded.environment.isEmpty)
    #expect(decoded.arguments == ["a"])
    let argumentOnly = CommandLineBytes.decode(arguments: [Array("a".utf8), bad], environment: [], checking: [])
    #expect(argumentOnly.refusal == .argument(2))
  }
}
