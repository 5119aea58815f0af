extension SHA256 {
    /// Incremental SHA-256, written from FIPS 180-4 so the package needs no
    /// dependency: feed bytes with `update` in any chunking, then `finalize`.
    ///
    /// A value type: copying a hasher forks the computation, which lets a
    /// caller hash a common prefix once.
    public struct Hasher: Sendable {
        /// FIPS 180-4 §5.3.3: the first 32 bits of the fractional parts of the
        /// square roots of the first eight primes.
        private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
            (0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19)
        /// Bytes not yet making up a whole 64-byte block.
        private var pending: [UInt8] = []
        /// Message length so far, in bytes.
        private var length: UInt64 = 0

        public init() {
            pending.reserveCapacity(64)
        }

        /// Adds `bytes` to the message.
        public mutating func update<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
            length &+= UInt64(bytes.count)
            var rest = bytes[...]
            if !pending.isEmpty {
                let take = min(64 - pending.count, rest.count)
                pending.append(contentsOf: rest.prefix(take))
                rest = rest.dropFirst(take)
                guard pending.count == 64 else { return }
                let block = pending
                pending.removeAll(keepingCapacity: true)
                block.withUnsafeBufferPointer { compress($0, blocks: 1) }
            }
            let whole = rest.count / 64
            if whole > 0 {
                let blocks = Array(rest.prefix(whole * 64))
                blocks.withUnsafeBufferPointer { compress($0, blocks: whole) }
                rest = rest.dropFirst(whole * 64)
            }
            pending.append(contentsOf: rest)
        }

        /// Pads the message (§5.1.1) and returns the 32-byte digest. The hasher
        /// should not be used afterwards.
        public mutating func finalize() -> [UInt8] {
            let bitLength = length &* 8
            var tail = pending
            tail.append(0x80)
            while tail.count % 64 != 56 { tail.append(0) }
            for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
            tail.withUnsafeBufferPointer { compress($0, blocks: tail.count / 64) }
            pending.removeAll()
            var digest: [UInt8] = []
            digest.reserveCapacity(32)
            for word in [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7] {
                digest.append(UInt8(truncatingIfNeeded: word >> 24))
                digest.append(UInt8(truncatingIfNeeded: word >> 16))
                digest.append(UInt8(truncatingIfNeeded: word >> 8))
                digest.append(UInt8(truncatingIfNeeded: word))
            }
            return digest
        }

        /// FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the
        /// cube roots of the first 64 primes.
        private static let k: [UInt32] = [
            0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
            0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
            0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
            0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
            0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
            0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
            0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
            0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
        ]

        /// The compression function (§6.2.2) over `blocks` consecutive 64-byte blocks.
        private mutating func compress(_ bytes: UnsafeBufferPointer<UInt8>, blocks: Int) {
            var w = [UInt32](repeating: 0, count: 64)
            let k = Self.k
            var (h0, h1, h2, h3, h4, h5, h6, h7) = state
            w.withUnsafeMutableBufferPointer { w in
                k.withUnsafeBufferPointer { k in
                    for block in 0..<blocks {
                        let base = block * 64
                        for t in 0..<16 {
                            let i = base + t * 4
                            w[t] = UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16 | UInt32(bytes[i + 2]) << 8 | UInt32(bytes[i + 3])
                        }
                        for t in 16..<64 {
                            let s0 = Self.rotr(w[t - 15], 7) ^ Self.rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
                            let s1 = Self.rotr(w[t - 2], 17) ^ Self.rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
                            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
                        }
                        var (a, b, c, d, e, f, g, h) = (h0, h1, h2, h3, h4, h5, h6, h7)
                        for t in 0..<64 {
                            let sum1 = Self.rotr(e, 6) ^ Self.rotr(e, 11) ^ Self.rotr(e, 25)
                            let choose = (e & f) ^ (~e & g)
                            let t1 = h &+ sum1 &+ choose &+ k[t] &+ w[t]
                            let sum0 = Self.rotr(a, 2) ^ Self.rotr(a, 13) ^ Self.rotr(a, 22)
                            let majority = (a & b) ^ (a & c) ^ (b & c)
                            let t2 = sum0 &+ majority
                            h = g
                            g = f
                            f = e
                            e = d &+ t1
                            d = c
                            c = b
                            b = a
                            a = t1 &+ t2
                        }
                        h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d
                        h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= h
                    }
                }
            }
            state = (h0, h1, h2, h3, h4, h5, h6, h7)
        }

        @inline(__always)
        private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 {
            x >> n | x << (32 - n)
        }
    }
}
