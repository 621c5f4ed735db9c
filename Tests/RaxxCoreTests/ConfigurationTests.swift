import Foundation
import RaxxCore
import Testing

@Suite struct ConfigurationTests {
    @Test func defaultsToProductionAndXDGFolders() throws {
        let c = try RaxxConfiguration(environment: ["HOME": "/home/trader"])
        #expect(c.endpoint.url.absoluteString == "https://api.raxx.app")
        #expect(c.stateDirectory.path == "/home/trader/.local/state/raxx")
        #expect(c.cacheDirectory.path == "/home/trader/.cache/raxx")
        #expect(c.connectTimeout == .seconds(5))
        #expect(c.totalTimeout == .seconds(20))
    }

    @Test func honoursXDGFolders() throws {
        let c = try RaxxConfiguration(environment: ["HOME": "/h", "XDG_STATE_HOME": "/s", "XDG_CACHE_HOME": "/c"])
        #expect(c.stateDirectory.path == "/s/raxx")
        #expect(c.cacheDirectory.path == "/c/raxx")
    }

    @Test func relativeXDGFoldersAreIgnored() throws {
        // The XDG spec says relative paths are invalid and must be ignored.
        let c = try RaxxConfiguration(environment: ["HOME": "/h", "XDG_STATE_HOME": "state"])
        #expect(c.stateDirectory.path == "/h/.local/state/raxx")
    }

    @Test func raxxHomePutsEverythingInOneFolder() throws {
        let c = try RaxxConfiguration(environment: ["HOME": "/h", "RAXX_HOME": "/tmp/r", "XDG_STATE_HOME": "/s"])
        #expect(c.stateDirectory.path == "/tmp/r/state")
        #expect(c.cacheDirectory.path == "/tmp/r/cache")
    }

    /// The folders are kept as paths (the stores build their files' paths from them as text), the
    /// same ones URL's path handling gave: absolute, without a trailing slash.
    @Test func foldersAreTheSamePathsAsURLsGave() throws {
        let cwd = FileManager.default.currentDirectoryPath
        for (home, raxxHome) in [("/h/", "/tmp/r/"), ("/h", "rel/home"), ("/h", "/tmp/with space/ü"), ("/", "/")] as [(String, String)] {
            let c = try RaxxConfiguration(environment: ["HOME": home, "RAXX_HOME": raxxHome])
            let root = URL(fileURLWithPath: raxxHome, isDirectory: true)
            #expect(c.stateDirectoryPath == root.appendingPathComponent("state", isDirectory: true).path, "\(raxxHome)")
            #expect(c.cacheDirectoryPath == root.appendingPathComponent("cache", isDirectory: true).path, "\(raxxHome)")
            #expect(c.stateDirectory.path == c.stateDirectoryPath)
            let x = try RaxxConfiguration(environment: ["HOME": home])
            #expect(
                x.stateDirectoryPath
                    == URL(fileURLWithPath: home, isDirectory: true)
                    .appendingPathComponent(".local/state", isDirectory: true).appendingPathComponent("raxx", isDirectory: true).path, "\(home)")
        }
        #expect(try RaxxConfiguration(environment: ["HOME": "/h", "RAXX_HOME": "rel"]).cacheDirectoryPath == cwd + "/rel/cache")
    }

    @Test func readsTimeouts() throws {
        let c = try RaxxConfiguration(environment: ["HOME": "/h", "RAXX_CONNECT_TIMEOUT": "750ms", "RAXX_TIMEOUT": "1m"])
        #expect(c.connectTimeout == RaxxDuration(milliseconds: 750))
        #expect(c.totalTimeout == .minutes(1))
    }

    @Test func badTimeoutIsAUsageError() {
        #expect(throws: RaxxError.self) { try RaxxConfiguration(environment: ["HOME": "/h", "RAXX_TIMEOUT": "soon"]) }
        do {
            _ = try RaxxConfiguration(environment: ["HOME": "/h", "RAXX_TIMEOUT": "0s"])
            Issue.record("a zero timeout was accepted")
        } catch {
            #expect(error.status == .usage)
            #expect(error.message.contains("RAXX_TIMEOUT"))
        }
    }

    @Test func withoutAnyHomeThereIsNowhereToKeepFiles() {
        do {
            _ = try RaxxConfiguration(environment: [:])
            Issue.record("no error")
        } catch {
            #expect(error.status == .usage)
        }
    }
}

@Suite struct APIEndpointTests {
    @Test(arguments: [
        "https://api.raxx.app", "https://example.com:8443/base", "http://127.0.0.1:8080",
        "http://127.1.2.3", "http://localhost:9", "http://[::1]:8080",
    ])
    func accepts(url: String) throws {
        #expect(try APIEndpoint(parsing: url).url.absoluteString == url)
    }

    @Test(arguments: [
        "http://example.com", "http://10.0.0.1:80", "http://192.168.1.1", "http://127.0.0.1.evil.com",
        "ftp://127.0.0.1", "not a url", "https://user:pw@api.raxx.app", "https://api.raxx.app/?x=1",
    ])
    func refuses(url: String) {
        do {
            _ = try APIEndpoint(parsing: url)
            Issue.record("accepted \(url)")
        } catch {
            #expect(error.status == .usage)
            #expect(!error.message.isEmpty)
        }
    }

    /// Brackets at either end are dropped (as trimming "[]" did), nothing else is.
    @Test func loopbackHostsWithAndWithoutBrackets() {
        for host in [
            "127.0.0.1", "127.255.0.9", "localhost", "LocalHost", "::1", "[::1]", "[[::1]]", "]::1[", "0:0:0:0:0:0:0:1",
            "[0:0:0:0:0:0:0:1]", "[localhost]", "[127.0.0.1]",
        ] {
            #expect(APIEndpoint.isLoopback(host: host), "\(host)")
        }
        for host in [
            "", "[", "[]", "10.0.0.1", "127.0.0.256", "127.0.0", "127.0.0.1.2", "[::2]", "::1x", "[:[:1]", "local host",
            "127.0.0.1 ", " ::1", "x[::1]",
        ] {
            #expect(!APIEndpoint.isLoopback(host: host), "\(host)")
        }
    }

    @Test func plainHTTPRefusalSaysWhy() {
        do {
            _ = try APIEndpoint(parsing: "http://api.raxx.app")
        } catch {
            #expect(error.message == "Refusing plain http to api.raxx.app: only loopback servers may use http.")
        }
    }
}

@Suite struct ServerOriginTests {
    func endpoint(_ text: String) throws -> APIEndpoint { try APIEndpoint(parsing: text) }

    @Test func theOriginIsSchemeHostAndPort() throws {
        #expect(try endpoint("https://API.raxx.app").origin == "https://api.raxx.app")
        #expect(try endpoint("https://api.raxx.app:443/").origin == "https://api.raxx.app")
        #expect(try endpoint("https://api.raxx.app:8443").origin == "https://api.raxx.app:8443")
        #expect(try endpoint("http://127.0.0.1:8080").origin == "http://127.0.0.1:8080")
        #expect(try endpoint("http://127.0.0.1:8080").storageKey == "http_127.0.0.1_8080")
        #expect(try endpoint("https://api.raxx.app").storageKey == "api.raxx.app")
    }

    /// The parts are read once, from the text as given: a text in the normal form is kept as it
    /// is, any other is written in it.
    @Test func theURLIsWrittenInTheNormalForm() throws {
        #expect(try endpoint("HTTPS://API.Raxx.app:443/base").url.absoluteString == "https://api.raxx.app/base")
        #expect(try endpoint("http://LOCALHOST:80").url.absoluteString == "http://localhost")
        #expect(try endpoint("http://[::1]:8080/a%20b").url.absoluteString == "http://[::1]:8080/a%20b")
        let loopback = try endpoint("http://[::1]:8080")
        #expect(loopback.scheme == "http" && loopback.port == 8080 && loopback.origin == "http://[::1]:8080")
        #expect(try endpoint("https://api.raxx.app:443").port == nil)
        // The production server, written out part by part, is what parsing its address gives.
        #expect(try APIEndpoint.production == endpoint("https://api.raxx.app"))
    }

    /// The folder name is made byte by byte for an ASCII key: the same name, character for
    /// character, as the rule written over Characters gives (the folders a cache and keystore
    /// already have keep their names).
    @Test func theFolderNameIsTheCharacterRulesName() throws {
        func byCharacters(_ e: APIEndpoint) -> String {
            var key = (e.scheme == "https" ? "" : e.scheme + "_") + e.host
            if let port = e.port { key += "_\(port)" }
            return String(key.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-") ? $0 : "-" })
        }
        for text in [
            "https://api.raxx.app", "https://API.raxx.app:8443/x", "http://127.0.0.1:8080", "http://[::1]:9",
            "http://localhost", "https://my-host_1.example.com", "https://xn--bcher-kva.example", "http://[0:0:0:0:0:0:0:1]:1",
        ] {
            let e = try endpoint(text)
            #expect(e.storageKey == byCharacters(e), "\(text)")
        }
        #expect(try endpoint("http://[::1]:8080").storageKey == "http_--1_8080")
    }

    @Test func aPasskeySignsOnlyForTheServersOwnSite() throws {
        let production = try endpoint("https://api.raxx.app")
        #expect(production.permits(rpID: "api.raxx.app"))
        #expect(production.permits(rpID: "raxx.app"))
        for other in ["app", "evil.example", "raxx.app.evil.example", "pi.raxx.app", "localhost", ".raxx.app", "raxx.app."] {
            #expect(!production.permits(rpID: other), "\(other)")
        }
        let loopback = try endpoint("http://127.0.0.1:8080")
        #expect(loopback.permits(rpID: "localhost"))
        #expect(!loopback.permits(rpID: "raxx.app"))
        #expect(!loopback.permits(rpID: "127.0.0.1"))
        #expect(APIEndpoint.clientOrigin(rpID: "raxx.app") == "https://raxx.app")
    }
}

/// The environment the tools read at start, taken from `environ` directly.
@Suite struct ProcessEnvironmentTests {
    @Test func holdsWhatProcessInfoHolds() {
        let name = "RAXX_TEST_ENV_\(UInt32.random(in: 0...UInt32.max))"
        setenv(name, "a=b=c", 1)
        setenv(name + "_LONGER", "other", 1)
        defer { unsetenv(name); unsetenv(name + "_LONGER") }
        #expect(EnvironmentVariables.process[name] == "a=b=c")
        #expect(EnvironmentVariables.process[String(name.dropLast())] == nil)
        #expect(EnvironmentVariables.process["HOME"] == ProcessInfo.processInfo.environment["HOME"])
        #expect(EnvironmentVariables.process["PATH"] == ProcessInfo.processInfo.environment["PATH"])
        #expect(EnvironmentVariables.process["RAXX_NOT_SET_\(UInt32.random(in: 0...UInt32.max))"] == nil)
    }

    @Test func readsTheConfigurationAsADictionaryWould() throws {
        // Whatever this process's environment is (a variable set here would reach the tools other
        // tests start meanwhile).
        let fromDictionary = Result { () throws(RaxxError) in try RaxxConfiguration(environment: ProcessInfo.processInfo.environment) }
        let fromProcess = Result { () throws(RaxxError) in try RaxxConfiguration(environment: .process) }
        #expect(fromProcess == fromDictionary)
    }

    /// The pager and RAXX_DEBUG, trimmed of the spaces around them; `cat` or nothing is no pager.
    @Test func thePagerAndTheDebugFlagAreReadTrimmed() throws {
        #expect(try RaxxConfiguration(environment: ["HOME": "/h"]).pagerCommand == "less -FRX")
        #expect(try RaxxConfiguration(environment: ["HOME": "/h", "PAGER": "  most -s\t"]).pagerCommand == "most -s")
        #expect(try RaxxConfiguration(environment: ["HOME": "/h", "PAGER": "more", "RAXX_PAGER": " cat "]).pagerCommand == nil)
        #expect(try RaxxConfiguration(environment: ["HOME": "/h", "PAGER": " \t "]).pagerCommand == nil)
        #expect(try RaxxConfiguration(environment: ["HOME": "/h", "RAXX_DEBUG": "x, api "]).debugAPI)
        #expect(try !RaxxConfiguration(environment: ["HOME": "/h", "RAXX_DEBUG": "apis"]).debugAPI)
    }
}
