import Foundation
import TaskCrypto
import TaskKeyTestSupport
import Testing

@testable import TaskVault

/// A store at its limit of 10,000 items: refused above it on read, and its
/// items held in the store's one locked buffer (issue 14 goal 5).
@Suite("Vault: stores at scale")
struct StoreScaleTests {
  @Test func moreThan10000ItemsIsRefusedOnRead() throws {
    // K = 0, primary = 0, N = 10,001, then zero padding: refused at N.
    let plaintext = try SecureBytes(zeroedCount: VaultLimits.paddingBlock)
    plaintext.withUnsafeMutableBytes { raw in
      let count = UInt32(VaultLimits.maximumItemCount + 1)
      for index in 0..<4 { raw[8 + index] = UInt8(truncatingIfNeeded: count >> UInt32(24 - 8 * index)) }
    }
    #expect(throws: ParseFailure.self) { _ = try StoreContents.decode(plaintext, store: .deviceOnly) }
  }

  @Test func theItemsOfAStoreShareItsOneLockedBuffer() throws {
    let items = (0..<100).map { index in
      StoredItem(
        name: String(format: "item-%03d", index), label: "label \(index)", itemClass: .afterFirstUnlockThisDeviceOnly,
        created: 0, modified: 0, value: secret("value \(index)"))
    }
    let plaintext = try StoreContents(keyring: nil, items: items).encode()
    let decoded = try StoreContents.decode(plaintext, store: .deviceOnly)
    #expect(decoded.items.allSatisfy { $0.value.region === plaintext })
    for (index, item) in decoded.items.enumerated() {
      #expect(item.value.withUnsafeBytes { Array($0) } == Array("value \(index)".utf8))
      #expect(item.label == "label \(index)")
    }
    // A value handed out is a copy in a buffer of its own.
    let copy = try decoded.items[7].value.copied()
    #expect(copy !== plaintext && copy.withUnsafeBytes { Array($0) } == Array("value 7".utf8))
  }
}
