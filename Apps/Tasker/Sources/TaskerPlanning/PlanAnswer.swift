import CommandKit

/// One step of a plan as the provider gave it, checked: which candidate
/// (by its place in the request) and why.
public struct PlanStep: Sendable, Equatable {
  /// The candidate's index in the request (label `t<index+1>`).
  public let index: Int
  /// The provider's reason: 1 to 200 scalars, no control or
  /// bidirectional-override character.
  public let reason: String
}

/// The rules a provider's answer must pass before anything is shown or
/// applied (docs/formats/plan-request.md, "Answers"), in their order. A
/// provider can only order the candidates it was given: an answer never
/// names a task to edit, delete or read, and nothing in it is executed.
public enum PlanAnswer {
  /// The longest answer to a question, in Unicode scalars.
  public static let maximumAnswerScalars = 4000
  /// The longest reason, in Unicode scalars.
  public static let maximumReasonScalars = 200
  /// The largest body read: 1 MiB.
  public static let maximumBodyBytes = 1 << 20

  /// The status rule: 200 goes on; 401 and 403, 429 and every other status
  /// have their own errors.
  ///
  /// - Parameters:
  ///   - status: The final status.
  ///   - retryAfter: The `Retry-After` header, if any.
  /// - Throws: `PlanningError.keyRejected`, `.rateLimited`, `.providerFailed`.
  public static func check(status: Int, retryAfter: String?) throws(PlanningError) {
    switch status {
    case 200: return
    case 401, 403: throw .keyRejected(status: status)
    case 429:
      let seconds = retryAfter.flatMap { text in
        text.utf8.count <= 6 && text.utf8.allSatisfy { (0x30...0x39).contains($0) } ? Int(text) : nil
      }
      throw .rateLimited(retryAfterSeconds: seconds)
    default: throw .providerFailed(status: status)
    }
  }

  /// The checked plan in `body`, a chat-completions response to a request
  /// with `labels`.
  ///
  /// - Returns: The steps, best first; each candidate at most once.
  /// - Throws: `PlanningError.answerRefused` naming the rule broken.
  public static func plan(_ body: [UInt8], labels: [String]) throws(PlanningError) -> [PlanStep] {
    let content = try content(of: body)
    guard case .object(let answer) = try parse(Array(content.utf8), "the message content is not strict JSON") else {
      throw .answerRefused(reason: "the message content is not a JSON object")
    }
    guard answer.count == 1, case .array(let items)? = answer["plan"] else {
      throw .answerRefused(reason: "the content is not an object with exactly the member plan, an array")
    }
    guard items.count <= labels.count else {
      throw .answerRefused(reason: "the plan has more steps than there were tasks")
    }
    let index = Dictionary(uniqueKeysWithValues: labels.enumerated().map { ($1, $0) })
    var seen: Set<Int> = []
    var steps: [PlanStep] = []
    for item in items {
      guard case .object(let members) = item, members.count == 2, case .string(let label)? = members["id"],
        case .string(let reason)? = members["reason"]
      else { throw .answerRefused(reason: "a step is not an object with exactly the strings id and reason") }
      guard let position = index[label] else { throw .answerRefused(reason: "a step names an id it was not given") }
      guard seen.insert(position).inserted else { throw .answerRefused(reason: "a step repeats an id") }
      try check(reason: reason)
      steps.append(PlanStep(index: position, reason: reason))
    }
    return steps
  }

  /// The checked answer text in `body`, a chat-completions response to a
  /// question. The text is kept as it came; a printer makes its control
  /// characters visible.
  ///
  /// - Throws: `PlanningError.answerRefused`.
  public static func text(_ body: [UInt8]) throws(PlanningError) -> String {
    let text = try content(of: body)
    let count = text.unicodeScalars.count
    guard count >= 1, count <= maximumAnswerScalars else {
      throw .answerRefused(reason: "the answer is empty or longer than \(maximumAnswerScalars) characters")
    }
    return text
  }

  /// `choices[0].message.content`, after the size, body, choice and
  /// `finish_reason` rules.
  static func content(of body: [UInt8]) throws(PlanningError) -> String {
    guard body.count <= maximumBodyBytes else { throw .answerRefused(reason: "the body is larger than 1 MiB") }
    guard case .object(let response) = try parse(body, "the body is not strict JSON") else {
      throw .answerRefused(reason: "the body is not a JSON object")
    }
    guard case .array(let choices)? = response["choices"], case .object(let choice)? = choices.first,
      case .object(let message)? = choice["message"], case .string(let content)? = message["content"]
    else { throw .answerRefused(reason: "the body has no choices[0].message.content string") }
    switch choice["finish_reason"] {
    case nil, .null?, .string("stop")?: return content
    case .string("length")?: throw .answerRefused(reason: "the answer was cut short (finish_reason length)")
    default: throw .answerRefused(reason: "finish_reason is not stop")
    }
  }

  static func parse(_ bytes: [UInt8], _ reason: String) throws(PlanningError) -> JSONValue {
    do {
      return try JSONDocument(parsing: bytes).value
    } catch {
      throw .answerRefused(reason: reason)
    }
  }

  /// 1 to 200 scalars, none a control character (C0, DEL, C1) or a
  /// bidirectional mark, embedding, override or isolate.
  static func check(reason: String) throws(PlanningError) {
    let scalars = reason.unicodeScalars
    guard (1...maximumReasonScalars).contains(scalars.count) else {
      throw .answerRefused(reason: "a reason is empty or longer than \(maximumReasonScalars) characters")
    }
    let refused = scalars.contains { scalar in
      switch scalar.value {
      case 0x00...0x1F, 0x7F...0x9F, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
      default: return false
      }
    }
    guard !refused else {
      throw .answerRefused(reason: "a reason holds a control or bidirectional-override character")
    }
  }
}
