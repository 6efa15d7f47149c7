import FoundationEssentials
import TaskCrypto

/// When an item can be read and whether it may leave the device, named as
/// the Keychain names its accessibility classes.
public enum VaultItemClass: UInt8, Sendable, Equatable, CaseIterable {
  /// Readable after the vault has been unlocked once since the machine
  /// started; kept in the synchronisable store, so it may travel to the
  /// user's other devices inside an end-to-end encrypted sync bundle.
  case afterFirstUnlock = 1
  /// Readable after first unlock, and never leaves this device: kept in
  /// the device-only store, which no sync bundle or backup carries.
  case afterFirstUnlockThisDeviceOnly = 2

  /// The name used in `taskkey` output and JSON.
  public var rawName: String {
    switch self {
    case .afterFirstUnlock: return "after-first-unlock"
    case .afterFirstUnlockThisDeviceOnly: return "after-first-unlock-this-device-only"
    }
  }
}

/// What the vault knows about an item, apart from its value.
public struct VaultItemAttributes: Sendable, Equatable {
  /// The item's unique name: 1 to 128 bytes of `A-Z a-z 0-9 . _ - : @ /`.
  public let name: String
  /// A human-readable label: valid UTF-8, at most 256 bytes, no control
  /// characters. Encrypted like the value.
  public let label: String
  /// The item's class, which also names the store holding it.
  public let itemClass: VaultItemClass
  /// When the item was first set, in whole seconds since 1970.
  public let created: Date
  /// When the item was last set, in whole seconds since 1970.
  public let modified: Date

  /// Makes attributes; the vault checks the name and label when storing.
  public init(name: String, label: String, itemClass: VaultItemClass, created: Date, modified: Date) {
    self.name = name
    self.label = label
    self.itemClass = itemClass
    self.created = created
    self.modified = modified
  }
}

/// An item with its value, which stays in locked memory.
public struct VaultItem: Sendable {
  /// The item's attributes.
  public let attributes: VaultItemAttributes
  /// The secret value, in locked, wiped memory.
  public let value: SecureBytes

  /// Pairs attributes and a value.
  public init(attributes: VaultItemAttributes, value: SecureBytes) {
    self.attributes = attributes
    self.value = value
  }
}

/// The hard limits of a vault, checked on every write and on every read
/// before any allocation.
public enum VaultLimits {
  /// The longest item name: 128 bytes.
  public static let maximumNameByteCount = 128
  /// The longest label: 256 bytes.
  public static let maximumLabelByteCount = 256
  /// The largest item value: 64 KiB.
  public static let maximumValueByteCount = 64 << 10
  /// The most items in one store: 10,000 (1,024 before the items of a
  /// store shared one locked buffer).
  public static let maximumItemCount = 10_000
  /// The most note keys in the keyring: 256.
  public static let maximumKeyCount = 256
  /// The most retired key ids remembered (tombstones): 4096.
  public static let maximumRetiredKeyCount = 4096
  /// The largest store plaintext, padding included: 8 MiB.
  public static let maximumStoreByteCount = 8 << 20
  /// Store plaintexts are padded with zeros to a multiple of this: 512.
  public static let paddingBlock = 512
  /// The longest passphrase: 1024 bytes.
  public static let maximumPassphraseByteCount = PasswordKDF.maximumPassphraseByteCount
}

/// Checks an item name: 1...128 bytes of `A-Z a-z 0-9 . _ - : @ /`, not
/// starting with `-`.
func validateItemName(_ name: String) throws {
  let bytes = Array(name.utf8)
  guard !bytes.isEmpty else { throw TaskVaultError.invalidItemName(reason: "the name is empty") }
  guard bytes.count <= VaultLimits.maximumNameByteCount else {
    throw TaskVaultError.invalidItemName(reason: "longer than \(VaultLimits.maximumNameByteCount) bytes")
  }
  guard bytes[0] != UInt8(ascii: "-") else {
    throw TaskVaultError.invalidItemName(reason: "it must not start with '-'")
  }
  guard bytes.allSatisfy(isItemNameByte) else {
    throw TaskVaultError.invalidItemName(reason: "only letters, digits and . _ - : @ / are allowed")
  }
}

/// Whether `bytes` is a valid item name (the rules of `validateItemName`),
/// without allocating: the store reader checks 10,000 names per open.
func isValidItemName(_ bytes: UnsafeRawBufferPointer) -> Bool {
  guard let first = bytes.first, bytes.count <= VaultLimits.maximumNameByteCount, first != UInt8(ascii: "-") else {
    return false
  }
  return bytes.allSatisfy(isItemNameByte)
}

/// A byte of `A-Z a-z 0-9 . _ - : @ /`.
func isItemNameByte(_ byte: UInt8) -> Bool {
  switch byte {
  case 0x30...0x39, 0x41...0x5a, 0x61...0x7a, UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"),
    UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"):
    return true
  default:
    return false
  }
}

/// Checks a label (docs/formats/store-contents.md, "Labels"): at most 256
/// bytes of UTF-8 with no control character (C0, DEL, C1), no line or
/// paragraph separator, and no bidirectional control, which could make a
/// label print in another order than it is stored.
func validateLabel(_ label: String) throws {
  guard label.utf8.count <= VaultLimits.maximumLabelByteCount else {
    throw TaskVaultError.invalidLabel(reason: "longer than \(VaultLimits.maximumLabelByteCount) bytes")
  }
  if let refused = label.unicodeScalars.first(where: isRefusedInLabels) {
    let code = "U+" + String(refused.value, radix: 16, uppercase: true).leftPadded(to: 4)
    throw TaskVaultError.invalidLabel(
      reason: "\(code) is not allowed: control characters, line separators and bidirectional controls are refused")
  }
}

/// The scalars a label may not hold: C0 controls, DEL and C1 controls
/// (U+0000-U+001F, U+007F-U+009F), the line and paragraph separators
/// (U+2028, U+2029), and the bidirectional controls (U+061C, U+200E, U+200F,
/// U+202A-U+202E, U+2066-U+2069).
func isRefusedInLabels(_ scalar: Unicode.Scalar) -> Bool {
  switch scalar.value {
  case 0x00...0x1f, 0x7f...0x9f, 0x2028, 0x2029, 0x061c, 0x200e, 0x200f, 0x202a...0x202e, 0x2066...0x2069:
    return true
  default:
    return false
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: max(0, width - count)) + self
  }
}
