import Foundation
import RaxxCore
import RaxxTestSupport
import Testing

/// `Scripts/install` and `Scripts/package deb`, run on the tools as built for the tests.
@Suite(.blocking) struct InstallTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs a script of the repository; answers its status and output.
    static func script(_ name: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runToEnd(
            root.appendingPathComponent("Scripts/\(name)"), arguments,
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
        #expect(
            r.stdout.contains("  bash: add to ~/.bashrc:  for f in \"\(prefix.path)/share/bash-completion/completions\"/raxx-*; do . \"$f\"; done"),
            "\(r.stdout)")
        #expect(r.stdout.contains("  zsh:  add to ~/.zshrc, before compinit:  fpath=(\"\(prefix.path)/share/zsh/site-functions\" $fpath)"))
        #expect(
            r.stdout.contains(
                "  fish: add to ~/.config/fish/config.fish:  for f in \"\(prefix.path)/share/fish/vendor_completions.d\"/raxx-*.fish; source $f; end"))
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
            for completion in [
                "share/bash-completion/completions/\(tool)", "share/zsh/site-functions/_\(tool)",
                "share/fish/vendor_completions.d/\(tool).fish",
            ] {
                let text = try String(contentsOf: prefix.appendingPathComponent(completion), encoding: .utf8)
                #expect(text.contains(tool) && text.count > 200, "\(completion)")
                // Sourced, never run: no hashbang (lintian's bash-completion-with-hashbang).
                #expect(!text.hasPrefix("#!"), "\(completion)")
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

    /// What a package holds, laid out by `Scripts/package tree` from the tools as built for the
    /// tests (a debug build, which `deb` refuses: its Swift runtime is found only in the toolchain).
    @Test func theDebianPackageHoldsTheSuiteAndNamesItsLibraries() throws {
        let out = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let r = try Self.script("package", ["tree", "--out", out.path, "--no-build", "-c", "debug", "--bin", BuiltTools.directory.path])
        #expect(r.status == 0, "\(r.stderr)")
        let tree = out.appendingPathComponent("raxx")
        let control = try String(contentsOf: tree.appendingPathComponent("DEBIAN/control"), encoding: .utf8)
        #expect(control.contains("Package: raxx\n") && control.contains("Version: \(RaxxVersion.current)\n"))
        let depends = try #require(control.split(separator: "\n").first { $0.hasPrefix("Depends: ") })
        for library in ["libcurl", "libsodium", "libsqlite3"] { #expect(depends.contains(library), "\(depends)") }
        let files = FileManager.default
        for tool in tools {
            #expect(try files.destinationOfSymbolicLink(atPath: tree.path + "/usr/bin/\(tool)") == "../lib/raxx/raxx-suite", "\(tool)")
        }
        for path in ["usr/lib/raxx/raxx-suite"] + tools.map({ "usr/share/man/man1/\($0).1.gz" })
            + [
                "usr/share/man/man7/raxx.7.gz", "usr/share/bash-completion/completions/raxx-cache",
                "usr/share/zsh/vendor-completions/_raxx-order", "usr/share/fish/vendor_completions.d/raxx-dsr.fish",
                "usr/share/doc/raxx/examples/raxx-cache.cron", "usr/share/doc/raxx/examples/raxx-cache-refresh.service",
                "usr/share/doc/raxx/copyright", "usr/share/doc/raxx/changelog.gz", "DEBIAN/md5sums",
            ]
        {
            #expect(files.fileExists(atPath: tree.path + "/" + path), "\(path)")
        }
        #expect(!files.fileExists(atPath: tree.path + "/usr/lib/debug") && !files.fileExists(atPath: tree.path + "/usr/share/zsh/site-functions"))
        // A machine-readable copyright file with its copyright notice (lintian: copyright-without-copyright-notice).
        let copyright = try String(contentsOf: tree.appendingPathComponent("usr/share/doc/raxx/copyright"), encoding: .utf8)
        #expect(copyright.contains("\nFiles: *\nCopyright: ") && copyright.contains("\nLicense: "), "\(copyright)")
    }

    /// A package of a debug build would not run where it is installed: `deb` refuses it, naming
    /// the libraries no package provides, and makes nothing.
    @Test func aPackageOfADebugBuildIsRefused() throws {
        let out = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: out) }
        let named = try Self.script("package", ["deb", "--out", out.path + "/a", "--no-build", "-c", "debug", "--bin", BuiltTools.directory.path])
        #expect(named.status == 65 && named.stderr.contains("a package is made from a release build, not a debug one"), "\(named.stderr)")
        let found = try Self.script("package", ["deb", "--out", out.path + "/b", "--no-build", "--bin", BuiltTools.directory.path])
        #expect(
            found.status == 65 && found.stderr.contains("libraries no installed package provides") && found.stderr.contains("libswiftCore.so"),
            "\(found.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path + "/a") && !FileManager.default.fileExists(atPath: out.path + "/b"))
    }

    /// Every man page renders at 80 columns as man shows it, without a warning: no table wider
    /// than the page, no line troff cannot set (what lintian's groff-message reports).
    @Test func everyManPageRendersAt80ColumnsWithoutAWarning() throws {
        let pages = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("man").path).sorted()
        #expect(pages.contains("raxx.7") && pages.count == tools.count + 1)
        for page in pages {
            let path = Self.root.appendingPathComponent("man/\(page)").path
            let r = try runToEnd(
                URL(fileURLWithPath: "/usr/bin/man"), ["--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", path],
                environment: ["PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "MANWIDTH": "80", "MANROFFSEQ": ""])
            #expect(r.status == 0 && !r.stdout.isEmpty, "\(page): \(r.stderr)")
            #expect(r.stderr.isEmpty, "\(page): \(r.stderr)")
        }
    }

    /// The demo, on the tools as built: all three groups of users' jobs, end to end.
    @Test func theDemoShowsEveryTool() throws {
        let r = try runToEnd(
            Self.root.appendingPathComponent("Scripts/demo"), [],
            environment: [
                "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": NSTemporaryDirectory(), "LANG": "C.UTF-8",
                "RAXX_DEMO_BIN": BuiltTools.directory.path,
            ])
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
