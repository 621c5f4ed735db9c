import Foundation
import RaxxCore
import RaxxTestSupport
import Testing

/// `Scripts/install` and `Scripts/package deb`, run on the tools as built for the tests.
@Suite(.blocking) struct InstallTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs a script of the repository; answers its status and output.
    static func script(_ name: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runToEnd(root.appendingPathComponent("Scripts/\(name)"), arguments,
                     environment: ["PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME": NSTemporaryDirectory(), "LANG": "C.UTF-8"])
    }

    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-install-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func installPutsTheToolsManPagesAndCompletionsUnderThePrefix() throws {
        let prefix = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: prefix) }
        let r = try Self.script("install", ["--no-build", "-c", "debug", "--bin", BuiltTools.directory.path, "--prefix", prefix.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("installed into \(prefix.path)"))
        #expect(r.stdout.contains("is not on PATH"))
        // Each shell's one line that loads every tool's completions.
        #expect(r.stdout.contains("  bash: add to ~/.bashrc:  for f in \"\(prefix.path)/share/bash-completion/completions\"/raxx-*; do . \"$f\"; done"),
                "\(r.stdout)")
        #expect(r.stdout.contains("  zsh:  add to ~/.zshrc, before compinit:  fpath=(\"\(prefix.path)/share/zsh/site-functions\" $fpath)"))
        #expect(r.stdout.contains("  fish: add to ~/.config/fish/config.fish:  for f in \"\(prefix.path)/share/fish/vendor_completions.d\"/raxx-*.fish; source $f; end"))
        let suite = prefix.appendingPathComponent("lib/raxx/raxx-suite").path
        #expect(FileManager.default.isExecutableFile(atPath: suite))
        for tool in tools {
            // Each tool is a relative link to the one suite, and answers as the tool it is named.
            let link = prefix.appendingPathComponent("bin/\(tool)").path
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "../lib/raxx/raxx-suite")
            let version = try runToEnd(prefix.appendingPathComponent("bin/\(tool)"), ["--version"], environment: ["LANG": "C.UTF-8"])
            #expect(version.status == 0 && version.stdout == RaxxVersion.line(tool: tool) + "\n")
            let help = try runToEnd(prefix.appendingPathComponent("bin/\(tool)"), ["--help"], environment: ["LANG": "C.UTF-8"])
            #expect(help.status == 0 && help.stdout.contains("USAGE: \(tool) "), "\(tool): \(help.stdout.prefix(200))")
            let page = try String(contentsOf: prefix.appendingPathComponent("share/man/man1/\(tool).1"), encoding: .utf8)
            #expect(page == (try String(contentsOf: Self.root.appendingPathComponent("man/\(tool).1"), encoding: .utf8)))
            for completion in ["share/bash-completion/completions/\(tool)", "share/zsh/site-functions/_\(tool)",
                               "share/fish/vendor_completions.d/\(tool).fish"] {
                let text = try String(contentsOf: prefix.appendingPathComponent(completion), encoding: .utf8)
                #expect(text.contains(tool) && text.count > 200, "\(completion)")
            }
        }
        #expect(FileManager.default.fileExists(atPath: prefix.appendingPathComponent("share/man/man7/raxx.7").path))
        // Started by any other name, the suite says how it is meant to be started.
        let bare = try runToEnd(URL(fileURLWithPath: suite), ["status"], environment: ["LANG": "C.UTF-8"])
        #expect(bare.status == 64 && bare.stdout.isEmpty && bare.stderr.contains("start it by one of its names (raxx-auth, raxx-cache"))
        // What is missing is named, and nothing is half-installed over it.
        let empty = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: empty) }
        let missing = try Self.script("install", ["--no-build", "-c", "debug", "--bin", empty.path, "--prefix", prefix.path + "/other"])
        #expect(missing.status == 1 && missing.stderr.contains("not built in \(empty.path): raxx-suite"))
        #expect(!FileManager.default.fileExists(atPath: prefix.path + "/other/bin"))
        #expect(try Self.script("install", ["--frobnicate"]).status == 64)
    }

    @Test func theDebianPackageHoldsTheSuiteAndNamesItsLibraries() throws {
        let out = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let r = try Self.script("package", ["deb", "--out", out.path, "--no-build", "-c", "debug", "--bin", BuiltTools.directory.path])
        #expect(r.status == 0, "\(r.stderr)")
        let debs = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasSuffix(".deb") }
        let deb = try #require(debs.count == 1 ? out.appendingPathComponent(debs[0]).path : nil)
        #expect(debs[0].hasPrefix("raxx_\(RaxxVersion.current)_"))
        let info = try Self.run("/usr/bin/dpkg-deb", ["--field", deb, "Package", "Version", "Depends"])
        #expect(info.contains("Package: raxx") && info.contains("Version: \(RaxxVersion.current)"))
        for library in ["libcurl", "libsodium", "libsqlite3"] { #expect(info.contains(library), "\(info)") }
        let contents = try Self.run("/usr/bin/dpkg-deb", ["--contents", deb])
        for tool in tools { #expect(contents.contains(" ./usr/bin/\(tool) -> ../lib/raxx/raxx-suite\n"), "\(tool)") }
        for path in ["./usr/lib/raxx/raxx-suite"] + tools.map({ "./usr/share/man/man1/\($0).1.gz" })
            + ["./usr/share/man/man7/raxx.7.gz", "./usr/share/bash-completion/completions/raxx-cache",
               "./usr/share/zsh/vendor-completions/_raxx-order", "./usr/share/fish/vendor_completions.d/raxx-dsr.fish",
               "./usr/share/doc/raxx/examples/raxx-cache.cron", "./usr/share/doc/raxx/examples/raxx-cache-refresh.service",
               "./usr/share/doc/raxx/copyright"] {
            #expect(contents.contains(" \(path)\n"), "\(path)")
        }
        #expect(!contents.contains("/lib/debug/") && !contents.contains("site-functions"))
    }

    /// The demo, on the tools as built: all three groups of users' jobs, end to end.
    @Test func theDemoShowsEveryTool() throws {
        let r = try runToEnd(Self.root.appendingPathComponent("Scripts/demo"), [],
                             environment: ["PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": NSTemporaryDirectory(), "LANG": "C.UTF-8",
                                           "RAXX_DEMO_BIN": BuiltTools.directory.path])
        #expect(r.status == 0, "\(r.stderr.suffix(2000))")
        let all = r.stdout + r.stderr
        for expected in ["Filled: buy 10 AAPL", "delivered", "completed", "yes    dsr_", "exit status 69", "Demo complete"] {
            #expect(all.contains(expected), "\(expected)")
        }
        for tool in tools { #expect(all.contains("$ \(tool) ") || all.contains("\(tool) "), "\(tool)") }
    }

    static func run(_ path: String, _ arguments: [String]) throws -> String {
        try runToEnd(URL(fileURLWithPath: path), arguments, environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]).stdout
    }
}
