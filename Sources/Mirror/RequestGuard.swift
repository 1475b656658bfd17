import Foundation

/// The checks every request passes before anything else (DNS rebinding and cross-site requests), and the
/// attempt counter that slows down guessing.
public struct RequestGuard: Sendable {
    /// The names and addresses this machine answers to (lowercase, IPv6 without brackets).
    public var hostNames: Set<String>

    public init(hostNames: Set<String>) {
        self.hostNames = hostNames
    }

    /// This machine's names and every address of its interfaces, as now.
    public static func machine() -> RequestGuard {
        var names: Set<String> = ["localhost", "127.0.0.1", "::1"]
        var buffer = [CChar](repeating: 0, count: 256)
        if gethostname(&buffer, buffer.count) == 0 {
            let name = cText(buffer).lowercased()
            names.insert(name)
            names.insert(name + ".local")
        }
        names.formUnion(interfaceAddresses().map { $0.lowercased() })
        return RequestGuard(hostNames: names)
    }

    /// A C string filled in by the system, up to its terminating zero.
    private static func cText(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The numeric addresses of the machine's interfaces (IPv4 and IPv6, link-local ones without their zone).
    public static func interfaceAddresses() -> [String] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0 else { return [] }
        defer { freeifaddrs(first) }
        var addresses: [String] = []
        var current = first
        while let entry = current {
            defer { current = entry.pointee.ifa_next }
            guard let address = entry.pointee.ifa_addr else { continue }
            let family = Int32(address.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
            guard getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else {
                continue
            }
            let text = cText(host)
            addresses.append(String(text.split(separator: "%").first ?? Substring(text)))
        }
        return addresses
    }

    /// The host part of a `Host` header or an origin's authority: `[::1]:8787` → `::1`, `Pi.local:8787` →
    /// `pi.local`.
    static func hostPart(_ authority: String) -> String {
        let lowered = authority.lowercased()
        if lowered.hasPrefix("["), let close = lowered.firstIndex(of: "]") {
            return String(lowered[lowered.index(after: lowered.startIndex)..<close])
        }
        return String(lowered.split(separator: ":", maxSplits: 1).first ?? "")
    }

    /// Whether a `Host` header names this machine (otherwise: 421, a name that merely resolves here).
    public func allows(host: String?) -> Bool {
        guard let host, !host.isEmpty else { return false }
        return hostNames.contains(Self.hostPart(host))
    }

    /// Whether an `Origin` header, when there is one, is this very site (otherwise: 403, a page elsewhere).
    public func allows(origin: String?, host: String?) -> Bool {
        guard let origin else { return true }
        guard let host else { return false }
        let lowered = origin.lowercased(), site = host.lowercased()
        return lowered == "http://" + site || lowered == "https://" + site
    }
}

/// Counts attempts per key (an address) in a sliding minute.
public actor AttemptLimiter {
    private let limit: Int
    private let windowSeconds: Double
    private var attempts: [String: [Date]] = [:]
    private var lastPruned = Date.distantPast

    public init(limit: Int, perSeconds windowSeconds: Double = 60) {
        self.limit = limit
        self.windowSeconds = windowSeconds
    }

    /// Counts one attempt; false when the key already made `limit` in the window (429).
    public func allow(_ key: String, at time: Date = Date()) -> Bool {
        prune(at: time)
        let recent = (attempts[key] ?? []).filter { time.timeIntervalSince($0) < windowSeconds }
        guard recent.count < limit else {
            attempts[key] = recent
            return false
        }
        attempts[key] = recent + [time]
        return true
    }

    /// The keys with an attempt still in the window (or not yet pruned: at most one window late).
    public var trackedKeys: Int { attempts.count }

    /// Once a window, forgets every key whose last attempt is out of it: addresses that tried once and went away
    /// must not fill memory over the months a mirror runs.
    private func prune(at time: Date) {
        guard time.timeIntervalSince(lastPruned) >= windowSeconds || time < lastPruned else { return }
        lastPruned = time
        attempts = attempts.filter { _, dates in dates.last.map { time.timeIntervalSince($0) < windowSeconds } ?? false
        }
    }
}
