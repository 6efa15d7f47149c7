import TaskerHTTP

/// Why a planning provider could not be set up, asked or believed. Every
/// message says what to do next; none carries a key, a task or an answer's
/// text (a provider's words are data: they are never echoed into an
/// error).
public enum PlanningError: Error, Equatable, CustomStringConvertible {
  /// A provider name that is not 1 to 32 of `a-z 0-9 -` starting with a
  /// letter or digit.
  case invalidProviderName(String)
  /// `provider add` of a name that exists; nothing was changed.
  case providerExists(name: String)
  /// No provider by that name.
  case providerNotFound(name: String)
  /// No provider is set up at all (nothing is sent).
  case noProvider
  /// Several providers are set up and none was chosen.
  case severalProviders(names: [String])
  /// A provider on the public network without `--key-item`.
  case publicProviderNeedsKey(host: String)
  /// A model name that is not 1 to 128 visible ASCII characters.
  case invalidModel
  /// A key item name that is not a vault item name, or one of Tasker's own.
  case invalidKeyItem(name: String)
  /// The vault has no item by the key item's name.
  case keyItemMissing(name: String)
  /// The key item is synchronisable: a provider's key must be device-only.
  case keyItemNotDeviceOnly(name: String)
  /// The key item's value cannot be a bearer token (empty, longer than
  /// 4 KiB, or a byte other than visible ASCII).
  case keyValueUnusable(name: String)
  /// A stored provider record broke a rule of docs/formats/provider-record.md.
  case recordMalformed(name: String, reason: String)
  /// A stored provider record of a version this build does not read.
  case recordUnsupportedVersion(name: String, version: Int64)
  /// The question is empty, too long, or holds a control character.
  case invalidQuestion(reason: String)
  /// A provider on the public network was not confirmed: no terminal and
  /// no `--yes`, or the user said no. Nothing was sent.
  case notConfirmed(host: String)
  /// HTTP 401 or 403: the provider refused the key.
  case keyRejected(status: Int)
  /// HTTP 429, with the seconds `Retry-After` named, if it named any.
  case rateLimited(retryAfterSeconds: Int?)
  /// Another status than 200.
  case providerFailed(status: Int)
  /// The answer broke a rule of docs/formats/plan-request.md (the reason
  /// names the rule, never the provider's text).
  case answerRefused(reason: String)
  /// The exchange itself failed (`HTTPClientError`).
  case exchange(HTTPClientError)

  /// The message, ending with what to do next.
  public var description: String {
    switch self {
    case .invalidProviderName(let name):
      return "'\(name)' is not a provider name: use 1 to 32 of a-z, 0-9 and -, starting with a letter or digit"
    case .providerExists(let name):
      return "a provider named '\(name)' exists already; nothing was changed (remove it first to change it)"
    case .providerNotFound(let name):
      return "no planning provider is named '\(name)'; 'tasker provider list' shows them"
    case .noProvider:
      return "no planning provider is set up, so nothing was sent; add one with 'tasker provider add'"
    case .severalProviders(let names):
      return "several providers are set up (\(names.joined(separator: ", "))); choose one with --provider NAME"
    case .publicProviderNeedsKey(let host):
      return "\(host) is on the public network, so it needs a key: store it with "
        + "'taskkey item set provider/NAME --device-only' and give --key-item provider/NAME"
    case .invalidModel:
      return "a model name is 1 to 128 visible ASCII characters (no spaces)"
    case .invalidKeyItem(let name):
      return "'\(name)' is not a key item: give a vault item name (A-Z a-z 0-9 . _ - : @ /) "
        + "that does not begin with tasker/"
    case .keyItemMissing(let name):
      return "the vault has no item '\(name)' for the provider's key; store it with "
        + "'taskkey item set \(name) --device-only'"
    case .keyItemNotDeviceOnly(let name):
      return "the vault item '\(name)' is synchronisable, and a provider's key must never leave this device; "
        + "set it again with 'taskkey item set \(name) --device-only'"
    case .keyValueUnusable(let name):
      return "the value of the vault item '\(name)' cannot be sent as a bearer key (empty, over 4 KiB, "
        + "or not visible ASCII); set the provider's key again"
    case .recordMalformed(let name, let reason):
      return "the provider record '\(name)' is malformed (\(reason)); remove it and add it again"
    case .recordUnsupportedVersion(let name, let version):
      return "the provider record '\(name)' is version \(version), which this Tasker does not read; "
        + "update Tasker or add the provider again"
    case .invalidQuestion(let reason):
      return "the question was refused: \(reason)"
    case .notConfirmed(let host):
      return "nothing was sent: \(host) is on the public network and sending it your tasks was not confirmed; "
        + "run the command at a terminal to confirm, or add --yes"
    case .keyRejected(let status):
      return "the provider refused the key (HTTP \(status)); store the right key with "
        + "'taskkey item set ITEM --device-only'"
    case .rateLimited(let seconds):
      return "the provider is limiting requests (HTTP 429); try again "
        + (seconds.map { "in \($0) s" } ?? "later")
    case .providerFailed(let status):
      return "the provider answered HTTP \(status) instead of 200; check the URL and the model, "
        + "or try again later"
    case .answerRefused(let reason):
      return "the provider's answer was refused (\(reason)); nothing was changed. Try again, "
        + "or another model"
    case .exchange(let error):
      return error.description
    }
  }
}
