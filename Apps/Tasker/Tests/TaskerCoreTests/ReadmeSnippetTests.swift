import Foundation
import Testing

@Suite("README: the adoption steps quote this package's code exactly")
struct ReadmeSnippetTests {
  static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  /// Lines without their leading indentation, so a quote may be dedented.
  static func normalised(_ text: some StringProtocol) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false)
      .map { $0.drop { $0 == " " } }.joined(separator: "\n")
  }

  @Test func everyQuotedBlockIsInItsFile() throws {
    let readme = try String(contentsOf: Self.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
    let blocks = readme.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "\n```")[0] }
    #expect(blocks.count >= 9)
    for block in blocks {
      let lines = block.split(separator: "\n", omittingEmptySubsequences: false)
      let header = try #require(lines.first.map(String.init))
      #expect(header.hasPrefix("// "), "a quote names its file: \(header)")
      let file = Self.packageRoot.appendingPathComponent(String(header.dropFirst(3)))
      let source = try String(contentsOf: file, encoding: .utf8)
      let quote = Self.normalised(lines.dropFirst().joined(separator: "\n"))
      #expect(Self.normalised(source).contains(quote), "not found in \(header):\n\(quote)")
    }
  }
}
