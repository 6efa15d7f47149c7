import TaskCrypto
import TaskerCore
import TaskerHTTP

/// What one request to a provider cost and how it ended: the provider
/// log's line, without the time and name.
public struct ProviderExchange: Sendable {
  /// The final response, when one came.
  public let response: HTTPResponse?
  /// How it ended, as far as the exchange goes (the answer's own checks
  /// may still refuse a 200).
  public let outcome: ProviderCallOutcome
  /// The error, when the exchange failed.
  public let error: PlanningError?
}

/// Sends request bodies to a provider through TaskerHTTP: `POST
/// <url>/chat/completions` with `Content-Type` and `Accept` of
/// `application/json` and, when the record names a key item, the bearer
/// key; nothing else, and no task data in a header or the URL. TLS is
/// verified against the system store; plain HTTP only to loopback and
/// private-network literals; no redirect, no proxy; connect and total
/// timeouts; at most 1 MiB of body and 64 KiB of headers.
public struct ProviderClient: Sendable {
  /// The most response bytes read, header lines and body together: the
  /// answer's 1 MiB and 64 KiB for the headers.
  public static let responseLimit = PlanAnswer.maximumBodyBytes + (64 << 10)
  /// Seconds to connect.
  public static let connectSeconds = 10
  /// Seconds for the whole exchange unless the command says otherwise.
  public static let defaultTotalSeconds = 120

  private let http = HTTPClient()

  /// A client.
  public init() {}

  /// Where a record's requests go.
  public static func endpoint(of record: ProviderRecord) -> HTTPEndpoint {
    record.endpoint.appending(path: "chat/completions")
  }

  /// Sends `body` to `record`'s endpoint with `key`.
  ///
  /// - Parameters:
  ///   - body: A `PlanRequest`'s body.
  ///   - record: The provider.
  ///   - key: Its bearer key, in locked memory, or nil.
  ///   - totalSeconds: The limit of the whole exchange.
  /// - Returns: The response or the failure, with its log outcome; it
  ///   never throws, so every attempt can be logged.
  public func send(_ body: [UInt8], to record: ProviderRecord, key: SecureBytes?, totalSeconds: Int)
    -> ProviderExchange
  {
    let request = HTTPRequest(
      method: "POST", endpoint: Self.endpoint(of: record),
      headers: [("Content-Type", "application/json"), ("Accept", "application/json")], body: body, bearer: key)
    let limits = HTTPLimits(
      connectTimeoutSeconds: Self.connectSeconds, totalTimeoutSeconds: totalSeconds,
      maximumResponseBytes: Self.responseLimit)
    do {
      let response = try http.send(request, limits: limits, allowPlainHTTP: true)
      do {
        try PlanAnswer.check(status: response.status, retryAfter: response.header("Retry-After"))
        return ProviderExchange(response: response, outcome: .ok, error: nil)
      } catch {
        return ProviderExchange(response: response, outcome: Self.outcome(of: error), error: error)
      }
    } catch {
      let failure = PlanningError.exchange(error)
      return ProviderExchange(response: nil, outcome: Self.outcome(of: failure), error: failure)
    }
  }

  /// The log outcome of `error`.
  public static func outcome(of error: PlanningError) -> ProviderCallOutcome {
    switch error {
    case .keyRejected: return .keyRejected
    case .rateLimited: return .rateLimited
    case .providerFailed: return .providerFailed
    case .answerRefused: return .answerRefused
    case .exchange(let failure):
      switch failure {
      case .unreachable: return .unreachable
      case .timedOut: return .timedOut
      case .tlsFailed: return .tlsFailed
      case .redirectRefused: return .redirectRefused
      case .responseTooLarge: return .tooLarge
      case .badURL, .plainHTTPRefused, .headerRefused, .transport: return .transport
      }
    default: return .transport
    }
  }
}
