import AssistantKeys
import TaskerGate
import XCTest

/// `taskkey mint` refuses a grant outside `AssistantKeyRegistry.knownGrants`;
/// the gate's `GateGrant` must be exactly that list, or a mintable grant
/// would do nothing (or a needed one could not be minted).
final class GateGrantVocabularyTests: XCTestCase {
  func testTheGatesGrantsAreExactlyTheGrantsMintKnows() {
    XCTAssertEqual(GateGrant.allCases.map(\.rawValue).sorted(), AssistantKeyRegistry.knownGrants)
  }
}
