import COpenSSL
import Synchronization

/// AES-256-GCM, fetched from OpenSSL's default provider once per process
/// rather than by name on every call.
private let aes256GCM: OpaquePointer? = {
  ensureOpenSSL()
  return EVP_CIPHER_fetch(nil, "AES-256-GCM", nil)
}()

/// The cipher contexts cached for one key: contexts whose key schedule is
/// already set, so a seal or open only sets a new nonce.
///
/// Safe under concurrency without a lock: each direction has a few slots,
/// and a context is taken out of its slot with an atomic exchange for the
/// duration of one operation, so no two threads ever use one context at
/// once; a thread that finds every slot empty makes its own, and puts it
/// back if a slot is free (else frees it). `discard()` (called when a key is
/// retired) and `deinit` (when the key is released) free every cached
/// context, and OpenSSL wipes a context's key schedule as it frees it
/// (`EVP_CIPHER_CTX_free` clears the provider's key data). A context that
/// failed mid-operation is freed, never reused.
final class CipherContexts: @unchecked Sendable {
  /// Cached contexts per direction; more may exist while threads overlap.
  static let capacity = 4

  private let sealing = Slots()
  private let opening = Slots()
  private let discarded = Atomic<Bool>(false)

  init() {}

  deinit {
    sealing.freeAll()
    opening.freeAll()
  }

  /// Frees every cached context; later operations make fresh ones and
  /// free them after use.
  func discard() {
    discarded.store(true, ordering: .sequentiallyConsistent)
    sealing.freeAll()
    opening.freeAll()
  }

  /// How many contexts the cache holds now, for tests.
  var cachedCount: Int { sealing.count + opening.count }

  /// Runs `body` with a context for `key` in the given direction, its key
  /// already set. The context goes back to the cache when `body` returns
  /// and is freed when it throws.
  @inline(__always)
  func withContext<Result>(
    encrypting: Bool, key: SecureBytes, _ body: (OpaquePointer) throws -> Result
  ) throws -> Result {
    let slots = encrypting ? sealing : opening
    let context = try slots.take() ?? make(encrypting: encrypting, key: key)
    let result: Result
    do {
      result = try body(context)
    } catch {
      EVP_CIPHER_CTX_free(context)
      throw error
    }
    if discarded.load(ordering: .relaxed) || !slots.put(context) {
      EVP_CIPHER_CTX_free(context)
    } else if discarded.load(ordering: .sequentiallyConsistent) {
      // discard() ran while this context went back: take back what it
      // may have missed. It set the flag before emptying the slots, so
      // either it freed the context or this check sees the flag.
      slots.freeAll()
    }
    return result
  }

  private func make(encrypting: Bool, key: SecureBytes) throws -> OpaquePointer {
    guard let cipher = aes256GCM else { throw TaskCryptoError.backendFailure(function: "EVP_CIPHER_fetch") }
    guard let context = EVP_CIPHER_CTX_new() else {
      throw TaskCryptoError.backendFailure(function: "EVP_CIPHER_CTX_new")
    }
    let status = key.withUnsafeBytes { keyBytes in
      let keyPointer = keyBytes.bindMemory(to: UInt8.self).baseAddress
      return encrypting
        ? EVP_EncryptInit_ex(context, cipher, nil, keyPointer, nil)
        : EVP_DecryptInit_ex(context, cipher, nil, keyPointer, nil)
    }
    guard status == 1 else {
      ERR_clear_error()
      EVP_CIPHER_CTX_free(context)
      throw TaskCryptoError.backendFailure(function: encrypting ? "EVP_EncryptInit_ex" : "EVP_DecryptInit_ex")
    }
    return context
  }
}

/// A fixed row of atomic context slots; nil is an empty slot.
private final class Slots: @unchecked Sendable {
  private let first = Atomic<UnsafeMutableRawPointer?>(nil)
  private let second = Atomic<UnsafeMutableRawPointer?>(nil)
  private let third = Atomic<UnsafeMutableRawPointer?>(nil)
  private let fourth = Atomic<UnsafeMutableRawPointer?>(nil)

  private func slot<Result>(_ index: Int, _ body: (borrowing Atomic<UnsafeMutableRawPointer?>) -> Result) -> Result {
    switch index {
    case 0: return body(first)
    case 1: return body(second)
    case 2: return body(third)
    default: return body(fourth)
    }
  }

  /// Takes a context out of the first full slot, or nil.
  @inline(__always)
  func take() -> OpaquePointer? {
    for index in 0..<CipherContexts.capacity {
      if let pointer = slot(index, { $0.exchange(nil, ordering: .acquiring) }) { return OpaquePointer(pointer) }
    }
    return nil
  }

  /// Puts a context into the first empty slot; false when all are full.
  @inline(__always)
  func put(_ context: OpaquePointer) -> Bool {
    let pointer = UnsafeMutableRawPointer(context)
    for index in 0..<CipherContexts.capacity {
      let stored = slot(index) {
        $0.compareExchange(expected: nil, desired: pointer, ordering: .releasing).exchanged
      }
      if stored { return true }
    }
    return false
  }

  /// Empties every slot, freeing (and so wiping) its context.
  func freeAll() {
    for index in 0..<CipherContexts.capacity {
      if let pointer = slot(index, { $0.exchange(nil, ordering: .acquiringAndReleasing) }) {
        EVP_CIPHER_CTX_free(OpaquePointer(pointer))
      }
    }
  }

  var count: Int {
    (0..<CipherContexts.capacity).reduce(0) { total, index in
      total + (slot(index) { $0.load(ordering: .relaxed) } == nil ? 0 : 1)
    }
  }
}
