import Foundation

/// Where a tool keeps its files and which server it talks to, read once from the environment.
///
/// `RAXX_HOME` puts every file under one folder. Otherwise the keystore and journals live in
/// `$XDG_STATE_HOME/raxx` (default `~/.local/state/raxx`) and the cache in `$XDG_CACHE_HOME/raxx`
/// (default `~/.cache/raxx`).
public struct RaxxConfiguration: Sendable, Equatable {
    public var endpoint: APIEndpoint
    /// The state folder (keystore, journals), as a path: the stores build their files' paths from
    /// it as text. `URL`'s path handling (`appendingPathComponent`, `.path`) makes, at its first
    /// use, a `Set<UInt8>` the runtime instantiates by a scan of every conformance in the binary:
    /// about a tenth of an offline read, which needs none of it.
    public var stateDirectoryPath: String
    /// The cache folder, as a path.
    public var cacheDirectoryPath: String
    /// Where `PrivateFolders`' rule starts: `RAXX_HOME`, or `XDG_STATE_HOME` and `XDG_CACHE_HOME`
    /// (their defaults, `~/.local/state` and `~/.cache`); the state and cache folders themselves
    /// for a configuration made from them. Every folder from these down is the user's own and
    /// writable by no one else, and nothing below them is followed if it is a link.
    public var privateRootPaths: [String]
    public var connectTimeout: RaxxDuration
    public var totalTimeout: RaxxDuration
    /// The file holding this machine's identity, which the keystore is bound to (default
    /// /etc/machine-id). `RAXX_MACHINE_ID_FILE` replaces it, for tests that play another machine.
    public var machineIDPath: String?
    /// Reads older than this say how old their data is (`RAXX_CACHE_FRESHNESS`, default 10m).
    public var cacheFreshness: RaxxDuration = .minutes(10)
    /// Fills and closed orders older than this leave the cache after a refresh (`RAXX_CACHE_RETENTION`, default 365d).
    public var cacheRetention: RaxxDuration = .hours(365 * 24)
    /// A cache larger than this draws a warning after a refresh (`RAXX_CACHE_MAX_SIZE` in MiB, default 1024).
    public var cacheSizeCap: Int64 = 1024 << 20
    /// The dead man's switch timeout raxx-order arms by default (`RAXX_CANCEL_AFTER`, 5s to 10m;
    /// nil: the command's own default).
    public var cancelAfter: RaxxDuration?
    /// `RAXX_DEBUG=api` (a comma-separated list naming `api`): every request to Raptor and its
    /// answer on stderr, secrets redacted (`APITrace`).
    public var debugAPI = false
    /// `TZ`, for times in text tables (nil: the system's zone).
    public var timeZoneName: String?
    /// Colour in text tables on a terminal; off with `NO_COLOR` set to anything (no-color.org).
    public var colour = true
    /// Errors as one JSON object on stderr even when JSON output was not asked for
    /// (`RAXX_ERRORS=json`, for a script that parses them); otherwise they are text for a person.
    public var errorsAsJSON = false
    /// The pager a long table on a terminal goes through: `RAXX_PAGER`, else `PAGER`, else
    /// `less -FRX`; nil when one of them is empty or `cat` (no pager).
    public var pagerCommand: String? = "less -FRX"

    /// The zone text tables show times in: `TZ` (`Europe/Paris`, `:Europe/Paris`, `UTC`), else the
    /// system's. Made when a table needs it: JSON output never pays for the zone data.
    public var timeZone: TimeZone {
        if let name = timeZoneName, !name.isEmpty {
            let id = name.hasPrefix(":") ? String(name.dropFirst()) : name
            if let zone = TimeZone(identifier: id) { return zone }
        }
        return TimeZone.current
    }

    public static let defaultConnectTimeout = RaxxDuration.seconds(5)
    public static let defaultTotalTimeout = RaxxDuration.seconds(20)

    public var stateDirectory: URL {
        get { URL(fileURLWithPath: stateDirectoryPath, isDirectory: true) }
        set { stateDirectoryPath = newValue.path }
    }

    public var cacheDirectory: URL {
        get { URL(fileURLWithPath: cacheDirectoryPath, isDirectory: true) }
        set { cacheDirectoryPath = newValue.path }
    }

    public init(
        endpoint: APIEndpoint, stateDirectory: URL, cacheDirectory: URL,
        connectTimeout: RaxxDuration = defaultConnectTimeout, totalTimeout: RaxxDuration = defaultTotalTimeout
    ) {
        self.endpoint = endpoint
        stateDirectoryPath = stateDirectory.path
        cacheDirectoryPath = cacheDirectory.path
        privateRootPaths = [stateDirectoryPath, cacheDirectoryPath]
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
    }

    /// Reads `RAXX_API_URL`, `RAXX_HOME`, `XDG_STATE_HOME`, `XDG_CACHE_HOME`, `HOME`,
    /// `RAXX_CONNECT_TIMEOUT`, `RAXX_TIMEOUT`, `RAXX_MACHINE_ID_FILE`, the `RAXX_CACHE_*` settings and
    /// `RAXX_CANCEL_AFTER` and `RAXX_DEBUG`.
    public init(environment env: [String: String]) throws(RaxxError) {
        try self.init(environment: EnvironmentVariables(env))
    }

    /// As `init(environment:)`, from `env`'s variables (the process's: `.process`).
    public init(environment env: EnvironmentVariables) throws(RaxxError) {
        endpoint =
            try env["RAXX_API_URL"].flatMap { $0.isEmpty ? nil : $0 }.map { text throws(RaxxError) in
                try APIEndpoint(parsing: text)
            } ?? .production
        if let home = env["RAXX_HOME"], !home.isEmpty {
            let root = Self.absolute(home)
            stateDirectoryPath = Self.joined(root, "state")
            cacheDirectoryPath = Self.joined(root, "cache")
            privateRootPaths = [root]
        } else {
            guard let userHome = env["HOME"], !userHome.isEmpty else {
                throw RaxxError.usage(
                    "Neither RAXX_HOME nor HOME is set: there is nowhere to keep files.",
                    hint: "Set RAXX_HOME to a folder of your own.")
            }
            func xdg(_ name: String, _ fallback: String) -> String {
                if let dir = env[name], dir.hasPrefix("/") { return Self.absolute(dir) }
                return Self.joined(Self.absolute(userHome), fallback)
            }
            let stateHome = xdg("XDG_STATE_HOME", ".local/state"), cacheHome = xdg("XDG_CACHE_HOME", ".cache")
            stateDirectoryPath = Self.joined(stateHome, "raxx")
            cacheDirectoryPath = Self.joined(cacheHome, "raxx")
            privateRootPaths = [stateHome, cacheHome]
        }
        connectTimeout = try Self.duration(env, "RAXX_CONNECT_TIMEOUT") ?? Self.defaultConnectTimeout
        totalTimeout = try Self.duration(env, "RAXX_TIMEOUT") ?? Self.defaultTotalTimeout
        machineIDPath = env["RAXX_MACHINE_ID_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        timeZoneName = env["TZ"]
        colour = (env["NO_COLOR"] ?? "").isEmpty
        errorsAsJSON = env["RAXX_ERRORS"] == "json"
        // Trimmed without Foundation's trimmingCharacters: at start-up, its NSString bridging looked
        // up protocol conformances across the whole suite (about 1 ms of every command).
        let pager = (env["RAXX_PAGER"] ?? env["PAGER"] ?? "less -FRX").trimmingASCII { $0 == 0x20 || $0 == 0x09 }
        pagerCommand = pager.isEmpty || pager == "cat" ? nil : pager
        debugAPI = env["RAXX_DEBUG"].map { $0.split(separator: ",").contains { String($0).trimmingASCII { $0 == 0x20 || $0 == 0x09 } == "api" } } ?? false
        cacheFreshness = try Self.duration(env, "RAXX_CACHE_FRESHNESS") ?? cacheFreshness
        cacheRetention = try Self.duration(env, "RAXX_CACHE_RETENTION") ?? cacheRetention
        if let cancelAfter = try Self.duration(env, "RAXX_CANCEL_AFTER") {
            guard Self.cancelAfterRange.contains(cancelAfter) else {
                throw RaxxError.usage("RAXX_CANCEL_AFTER must be between 5s and 10m: \(cancelAfter)")
            }
            self.cancelAfter = cancelAfter
        }
        if let text = env["RAXX_CACHE_MAX_SIZE"], !text.isEmpty {
            guard let mib = Int64(text), mib > 0 else {
                throw RaxxError.usage("RAXX_CACHE_MAX_SIZE is not a size in MiB: \(text)")
            }
            cacheSizeCap = mib << 20
        }
    }

    /// `path` as an absolute path without a trailing slash (a relative one is taken from the
    /// current directory, as `URL(fileURLWithPath:)` takes it).
    static func absolute(_ path: String) -> String {
        var path = path.hasPrefix("/") ? path : joined(FileManager.default.currentDirectoryPath, path)
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path
    }

    /// `component` inside the folder at `base`.
    public static func joined(_ base: String, _ component: String) -> String {
        base.hasSuffix("/") ? base + component : base + "/" + component
    }

    /// The timeouts a dead man's switch takes (the server's bounds: 5 to 600 seconds).
    public static let cancelAfterRange = RaxxDuration.seconds(5)...RaxxDuration.seconds(600)

    private static func duration(_ env: EnvironmentVariables, _ name: String) throws(RaxxError) -> RaxxDuration? {
        guard let text = env[name], !text.isEmpty else { return nil }
        guard let d = RaxxDuration(parsing: text), d.milliseconds > 0 else {
            throw RaxxError.usage("\(name) is not a duration: \(text)", hint: "Write durations like 500ms, 10s or 2m.")
        }
        return d
    }
}

/// The environment variables a configuration is read from: a dictionary's, or the process's.
public struct EnvironmentVariables: Sendable {
    private let lookup: @Sendable (String) -> String?

    public init(_ variables: [String: String]) {
        lookup = { variables[$0] }
    }

    private init(lookup: @escaping @Sendable (String) -> String?) {
        self.lookup = lookup
    }

    public subscript(name: String) -> String? { lookup(name) }

    /// This process's environment, as `ProcessInfo.processInfo.environment` has it (a name given
    /// twice: the last one wins), read from `environ` at each lookup: no dictionary of every
    /// variable is made at each start (nor any dictionary: its first one, a generic type the
    /// runtime instantiates, costs a scan of every conformance in the binary).
    public static let process = EnvironmentVariables { name in
        name.withCString { wanted -> String? in
            let length = strlen(wanted)
            var found: String?
            var entry = environ
            while let pointer = entry.pointee {
                if strncmp(pointer, wanted, length) == 0, pointer[length] == 0x3D { found = String(cString: pointer + length + 1) }
                entry += 1
            }
            return found
        }
    }
}
