import AssistantKeys
import TaskerCore
import TaskerGate
import XCTest

final class GateDecisionTests: XCTestCase {
  private static let grantSets: [Set<GateGrant>] = (0..<(1 << GateGrant.allCases.count)).map { mask in
    Set(GateGrant.allCases.enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element))
  }

  /// Every combination of inputs, with the decision.
  private static func everyCase() -> [(GateCaller, GateAction, Set<GateGrant>, BudgetState, QuietState, GateDecision)] {
    var cases: [(GateCaller, GateAction, Set<GateGrant>, BudgetState, QuietState, GateDecision)] = []
    for caller in GateCaller.all {
      for action in GateAction.allCases {
        for grants in grantSets {
          for budget in BudgetState.allCases {
            for quiet in QuietState.allCases {
              let decision = GateDecision.decide(
                caller: caller, action: action, grants: grants, budget: budget, quiet: quiet)
              cases.append((caller, action, grants, budget, quiet, decision))
            }
          }
        }
      }
    }
    return cases
  }

  /// The table SECURITY.md prints: trust level × action with every grant,
  /// budget left and outside quiet hours. Written out by hand.
  func testTheDocumentedTableUnderNeutralConditions() {
    let a = GateDecision.allow
    let q = GateDecision.ask(.risky)
    let expected: [GateCaller: [GateAction: GateDecision]] = [
      .trusted: [
        .readTasks: a, .readNotes: a, .addTask: a, .editTask: a, .bulkEdit: a, .completeTask: a, .deleteTask: a,
        .addPage: a,
      ],
      .assistant(.restricted): [
        .readTasks: a, .readNotes: a, .addTask: q, .editTask: q, .bulkEdit: q, .completeTask: q, .deleteTask: q,
        .addPage: q,
      ],
      .assistant(.standard): [
        .readTasks: a, .readNotes: a, .addTask: a, .editTask: a, .bulkEdit: q, .completeTask: a, .deleteTask: q,
        .addPage: a,
      ],
      .assistant(.elevated): [
        .readTasks: a, .readNotes: a, .addTask: a, .editTask: a, .bulkEdit: a, .completeTask: a, .deleteTask: q,
        .addPage: a,
      ],
    ]
    for caller in GateCaller.all {
      for action in GateAction.allCases {
        let decision = GateDecision.decide(
          caller: caller, action: action, grants: Set(GateGrant.allCases), budget: .available, quiet: .outside)
        XCTAssertEqual(decision, expected[caller]?[action], "\(caller) \(action)")
      }
    }
  }

  func testEveryCombinationIsEnumeratedOnce() {
    XCTAssertEqual(Self.everyCase().count, 4 * 8 * 8 * 3 * 3)
  }

  func testTrustedModeIsAlwaysAllowed() {
    for (caller, action, _, _, _, decision) in Self.everyCase() where caller == .trusted {
      XCTAssertEqual(decision, .allow, "\(action)")
    }
  }

  func testAMissingGrantIsAlwaysRefusedNamingTheGrant() {
    for (caller, action, grants, budget, quiet, decision) in Self.everyCase() where caller != .trusted {
      guard let needed = action.requiredGrant, !grants.contains(needed) else { continue }
      XCTAssertEqual(decision, .refuse(.missingGrant(needed)), "\(caller) \(action) \(budget) \(quiet)")
    }
  }

  func testReadsWithTheirGrantAreAllowedWhateverBudgetAndQuietHours() {
    for (caller, action, grants, _, _, decision) in Self.everyCase() where !action.acts {
      if let needed = action.requiredGrant, !grants.contains(needed), caller != .trusted { continue }
      XCTAssertEqual(decision, .allow, "\(caller) \(action)")
    }
  }

  func testAnAssistantNeverActsOverBudgetOrWhenTheBudgetIsUndecidable() {
    for (caller, action, grants, budget, quiet, decision) in Self.everyCase()
    where caller != .trusted && action.acts && budget != .available {
      if let needed = action.requiredGrant, !grants.contains(needed) { continue }
      XCTAssertEqual(
        decision, .refuse(budget == .exhausted ? .budgetExhausted : .budgetUndecidable), "\(caller) \(action) \(quiet)")
    }
  }

  func testQuietHoursAndTheirUndecidableStateQueueEveryAction() {
    for (caller, action, grants, budget, quiet, decision) in Self.everyCase()
    where caller != .trusted && action.acts && budget == .available && quiet != .outside {
      if let needed = action.requiredGrant, !grants.contains(needed) { continue }
      XCTAssertEqual(decision, .ask(quiet == .inside ? .quietHours : .quietHoursUndecidable), "\(caller) \(action)")
    }
  }

  func testNoAssistantDeletesAndNoRestrictedKeyActsWithoutApproval() {
    for (caller, action, _, _, _, decision) in Self.everyCase() {
      if caller != .trusted && action == .deleteTask { XCTAssertNotEqual(decision, .allow) }
      if caller == .assistant(.restricted) && action.acts { XCTAssertNotEqual(decision, .allow) }
    }
  }

  func testDecisionWordsAreStable() {
    XCTAssertEqual(GateDecision.allow.word, "allow")
    XCTAssertEqual(GateDecision.ask(.quietHours).word, "ask:quiet-hours")
    XCTAssertEqual(GateDecision.refuse(.missingGrant(.notesRead)).word, "refuse:missing-grant:notes:read")
    XCTAssertEqual(GateDecision.refuse(.budgetUndecidable).word, "refuse:budget-undecidable")
  }

  func testUnknownGrantsGrantNothing() {
    XCTAssertEqual(GateGrant.known(in: ["notes:read", "calendar:write", "tasks:write"]), [.notesRead, .tasksWrite])
  }
}
