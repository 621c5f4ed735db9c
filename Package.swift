// swift-tools-version: 6.1
// The Raxx command-line suite: small executables over shared libraries, one model generated from
// Spec/openapi.yaml, HTTP through libcurl, secrets through libsodium, SQLite through GRDB.
import PackageDescription

let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
let openAPIRuntime = Target.Dependency.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")
let httpTypes = Target.Dependency.product(name: "HTTPTypes", package: "swift-http-types")

let crypto = Target.Dependency.product(name: "Crypto", package: "swift-crypto")

/// Every executable is hardened as Debian builds its packages: position-independent (the
/// toolchain's default; ASLR places the executable's own image at random too, as it does the
/// libraries, the stack and the heap) and with full RELRO (`-z relro -z now`: every symbol bound at
/// start and the relocation tables made read-only before `main`, so a stray write cannot redirect a
/// call). A tool that holds an unsealed keystore and a PIN-derived key in memory does not give that
/// up for start-up time: `Scripts/check-hardening` (run by `Scripts/check`, `Scripts/bench` and
/// `Scripts/package`) fails a build that lacks either.
/// Release executables are linked with lld, their relative relocations packed (RELR), and two
/// start-up savings that the start-up goals need (every `--version` <= 2x `sqlite3 :memory:
/// 'select 1'`, the status reads and `show portfolio` <= 3x; `Scripts/bench startup`, 2026-12-02:
/// without the first the slowest `--version` took 2.95x, without both 3.66x, with both 1.93x):
/// `--no-export-dynamic` takes back the `-export-dynamic` of the static stdlib's link arguments
/// (otherwise every public symbol of every module lands in the dynamic symbol table, which the
/// Swift runtime's start-up `dladdr` walks whole); and libstdc++, which the runtime needs, is
/// linked statically: the runtime's link arguments say `-lstdc++`, and `Scripts/link/libstdc++.so`,
/// a linker script first on the library path, answers it with the static archive.
let hardening: [LinkerSetting] = [.unsafeFlags(["-Xlinker", "-z", "-Xlinker", "relro", "-Xlinker", "-z", "-Xlinker", "now"])]
let releaseLinking: [LinkerSetting] = hardening + [
    .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic",
                  "-L\(Context.packageDirectory)/Scripts/link"], .when(configuration: .release)),
]
let grdb = Target.Dependency.product(name: "GRDB", package: "GRDB.swift")

/// Generic types' metadata through accessor functions, not mangled names: a mangled name is
/// decoded at run time, and its generic requirements (a dictionary's `Hashable` key) looked up by
/// scanning every conformance record of the program, about half a millisecond each in the suite.
/// Every target of ours but the tests (set at the end of this file): `raxx-auth status` ran 25 %
/// fewer instructions with it on RaxxVault alone.
let directMetadata: [SwiftSetting] = [.unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"])]

/// The sandbox's targets build with warnings as errors. The one that matters most: "no 'async'
/// operations occur within 'await' expression", which is how a blocking GRDB call looks when its
/// closure returns a non-Sendable value (a `Row`): it resolves to the synchronous `read`, which
/// waits for a connection on a thread of the cooperative pool. Under load that hung the sandbox
/// for good (two threads here, both waiting for readers held by tasks that needed a thread).
let sandboxWarnings: [SwiftSetting] = [.unsafeFlags(["-warnings-as-errors"])]

/// A tool is a command library (one file per verb) plus a few-line entrypoint; each names the
/// libraries it uses. The tools ship as one executable (raxx-suite), so modules are cut by concept,
/// not by what a tool links.
func tool(_ executable: String, library: String, dependencies: [Target.Dependency]) -> [Target] {
    [
        .target(name: library, dependencies: dependencies + [argumentParser]),
        .executableTarget(name: executable, dependencies: [.target(name: library), "RaxxCore"], linkerSettings: releaseLinking),
    ]
}

let package = Package(
    name: "raxx",
    products: [
        .executable(name: "raxx-auth", targets: ["raxx-auth"]),
        .executable(name: "raxx-cache", targets: ["raxx-cache"]),
        .executable(name: "raxx-order", targets: ["raxx-order"]),
        .executable(name: "raxx-notify", targets: ["raxx-notify"]),
        .executable(name: "raxx-dsr", targets: ["raxx-dsr"]),
        .executable(name: "raxx-sandbox", targets: ["raxx-sandbox"]),
        .executable(name: "raxx-suite", targets: ["raxx-suite"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-openapi-generator", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird", from: "2.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        // C libraries, each wrapped once.
        // libcurl is loaded at first use (dlopen), not linked: offline commands never load it.
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "CSQLite", linkerSettings: [.linkedLibrary("sqlite3")]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),

        // The API model: types, client and server generated from Spec/openapi.yaml at build time.
        .target(
            name: "RaxxAPI",
            dependencies: [openAPIRuntime, httpTypes],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // The server stubs, generated from the same spec for the sandbox alone.
        .target(
            name: "RaxxAPIServer",
            dependencies: ["RaxxAPI", openAPIRuntime, httpTypes],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),

        // Shared libraries: all the logic lives here. The README's Layout names each one's job and
        // what it may import; Scripts/check enforces it.
        // The commit the build is made from (the BuildStamp plugin), for --version.
        .target(name: "RaxxBuildStamp", plugins: ["BuildStamp"]),
        .plugin(name: "BuildStamp", capability: .buildTool(), path: "Scripts/plugins/BuildStamp"),
        .target(name: "RaxxCore", dependencies: ["RaxxBuildStamp", crypto]),
        // The wire, beside the generated model: RFC 3339 and the date transcoder, JSON Lines and
        // canonical JSON, and the fast paths' readers and writers, each checked against the model.
        .target(name: "RaxxWire", dependencies: ["RaxxCore", "RaxxAPI", openAPIRuntime, crypto]),
        .target(name: "RaxxDomain", dependencies: ["RaxxWire", "RaxxCore", "RaxxAPI", crypto]),
        // Domain values as command-line arguments, for the tools' commands and the sandbox's.
        .target(name: "RaxxArguments", dependencies: ["RaxxCore", "RaxxAPI", argumentParser]),
        // The client layer: the libcurl transport, failures and answers, and the session (passkey
        // ceremonies, silent renewal, step-up) riding on it.
        .target(name: "RaxxClient", dependencies: ["RaxxWire", "CCurl", "RaxxCore", "RaxxAPI", "RaxxVault", "RaxxSecrets", "RaxxWebAuthn", openAPIRuntime, httpTypes,
                                                   crypto]),
        .target(name: "RaxxWebAuthn", dependencies: ["RaxxWire", "RaxxCore", "RaxxAPI", crypto]),
        // Secret bytes wiped with libsodium, and the files that hold secrets (0600 in 0700 folders).
        .target(name: "RaxxSecrets", dependencies: ["CSodium", "RaxxCore"]),
        .target(name: "RaxxVault", dependencies: ["CSodium", "RaxxCore", "RaxxSecrets", "RaxxWire", "RaxxWebAuthn", crypto]),
        .target(name: "RaxxAge", dependencies: ["CSodium", "RaxxCore", "RaxxSecrets", crypto]),
        // What the client's stores and the sandbox's database share of SQLite: its log checkpointed
        // off the writer.
        .target(name: "RaxxSQLite", dependencies: [grdb, .product(name: "GRDBSQLite", package: "GRDB.swift")]),
        .target(name: "RaxxStore", dependencies: ["RaxxWire", "RaxxCore", "RaxxAPI", "RaxxDomain", "RaxxClient", "RaxxSQLite", "CSQLite", grdb,
                                                  .product(name: "GRDBSQLite", package: "GRDB.swift")]),
        .target(name: "RaxxOrders", dependencies: ["RaxxWire", "RaxxCore", "RaxxDomain", "RaxxAPI", "RaxxClient", "RaxxStore"]),
        .target(name: "RaxxAPNs", dependencies: ["RaxxWire", "RaxxCore", crypto]),
        .target(name: "RaxxPush", dependencies: ["RaxxWire", "CCurl", "RaxxCore", "RaxxAPNs", "RaxxAPI", "RaxxClient", "RaxxSecrets", crypto]),
        .target(name: "RaxxCLI", dependencies: ["RaxxWire", "RaxxCore", "RaxxDomain", "RaxxArguments", "RaxxClient", "RaxxVault", "RaxxSecrets", "RaxxStore",
                                                "RaxxAPI", openAPIRuntime,
                                                argumentParser]),
        .target(name: "RaxxDSR", dependencies: ["RaxxWire", "RaxxCore", "RaxxAPI", "RaxxDomain", "RaxxAge", crypto]),

        // The sandbox: a local Raptor built from the same spec, with real state in SQLite.
        .target(
            name: "RaxxSandbox",
            dependencies: [
                "RaxxWire", "RaxxAPI", "RaxxAPIServer", "RaxxCore", "RaxxDomain", "RaxxPush", "RaxxWebAuthn", "RaxxSQLite", "CSQLite", openAPIRuntime, httpTypes,
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: sandboxWarnings
        ),
        // A local APNs endpoint: HTTP/2 over TLS, checking what Apple checks, with scripted failures.
        .target(
            name: "RaxxAPNsEndpoint",
            dependencies: [
                "RaxxWire", "RaxxAPNs", "RaxxCore", crypto,
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: sandboxWarnings
        ),
        .target(name: "RaxxSandboxCommand", dependencies: ["RaxxWire", "RaxxSandbox", "RaxxAPNsEndpoint", "RaxxCore", "RaxxDomain", "RaxxArguments", argumentParser,
                                                           .product(name: "Hummingbird", package: "hummingbird"),
                                                           .product(name: "Logging", package: "swift-log"),
                                                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
                swiftSettings: sandboxWarnings),
        .executableTarget(name: "raxx-sandbox", dependencies: ["RaxxSandboxCommand", "RaxxCore"], linkerSettings: releaseLinking),
        // The six in one executable, which Scripts/install and the package install once, each tool a
        // link to it: one copy of the runtime, Foundation and ICU instead of six.
        .executableTarget(name: "raxx-suite", dependencies: ["RaxxAuthCommand", "RaxxCacheCommand", "RaxxOrderCommand", "RaxxNotifyCommand",
                                                             "RaxxDSRCommand", "RaxxSandboxCommand", "RaxxCore"],
                          linkerSettings: releaseLinking),

        .target(name: "RaxxTestSupport", dependencies: ["RaxxWire", "RaxxCLI", "RaxxCore", "RaxxAPI", "RaxxVault", "RaxxSecrets", "RaxxStore",
                                                        openAPIRuntime, httpTypes, argumentParser]),
        // What only the tests that run a sandbox in-process need: a test that runs none builds no Hummingbird.
        .target(name: "RaxxSandboxTestSupport", dependencies: ["RaxxSandbox", "RaxxTestSupport", "RaxxAPI", "RaxxClient", "RaxxCore", openAPIRuntime,
                                                               .product(name: "Logging", package: "swift-log")]),

        .testTarget(name: "RaxxWireTests", dependencies: ["RaxxWire", "RaxxCore", "RaxxAPI", "RaxxTestSupport", openAPIRuntime, httpTypes,
                                                         .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "RaxxCoreTests", dependencies: ["RaxxWire", "RaxxCore", .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "RaxxVaultTests", dependencies: ["RaxxVault", "RaxxSecrets", "RaxxCore", "RaxxWebAuthn", "RaxxTestSupport", crypto,
                                                       .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "RaxxWebAuthnTests", dependencies: ["RaxxWebAuthn", "RaxxCore", crypto]),
        .testTarget(name: "RaxxAgeTests", dependencies: ["RaxxAge", "RaxxCore", "RaxxTestSupport"]),
        .testTarget(name: "RaxxClientTests", dependencies: ["RaxxSandboxTestSupport", "RaxxWire", "RaxxClient", "CCurl", "RaxxVault", "RaxxSecrets", "RaxxWebAuthn", "RaxxSandbox", "RaxxCore",
                                                           "RaxxDomain", "RaxxAPI", "RaxxTestSupport", openAPIRuntime, httpTypes,
                                                           .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "RaxxStoreTests", dependencies: ["RaxxWire", "RaxxStore", "RaxxCore", "RaxxAPI", "RaxxDomain", "RaxxTestSupport", "CSQLite", .product(name: "GRDB", package: "GRDB.swift"),
                                                          .product(name: "GRDBSQLite", package: "GRDB.swift")]),
        .testTarget(name: "RaxxSyncTests", dependencies: ["RaxxSandboxTestSupport", "RaxxStore", "RaxxClient", "RaxxVault", "RaxxSecrets", "RaxxSandbox", "RaxxCore",
                                                         "RaxxAPI", "RaxxTestSupport", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "RaxxCLITests", dependencies: ["RaxxCLI", "RaxxCore", "RaxxWire", "RaxxAPI", "RaxxVault", "RaxxSecrets", "RaxxTestSupport", argumentParser]),
        .testTarget(
            name: "RaxxSandboxTests",
            dependencies: [
                "RaxxWire", "RaxxSandbox", "RaxxSandboxCommand", "RaxxAPI", "RaxxClient", "RaxxCore", "RaxxDomain", "RaxxSQLite", "RaxxTestSupport", "RaxxSandboxTestSupport", openAPIRuntime,
                httpTypes,
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(name: "RaxxDomainTests", dependencies: ["RaxxDomain", "RaxxAPI",
                                                           .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "RaxxOrdersTests", dependencies: ["RaxxWire", "RaxxOrders", "RaxxDomain", "RaxxCore", "RaxxAPI", "RaxxClient", "RaxxStore", "RaxxTestSupport",
                                                           .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "RaxxOrderCommandTests", dependencies: ["RaxxWire", "RaxxOrderCommand", "RaxxCLI", "RaxxCore", "RaxxDomain", "RaxxAPI", "RaxxStore",
                                                                  "RaxxClient", "RaxxTestSupport"]),
        .testTarget(name: "RaxxNotifyCommandTests", dependencies: ["RaxxNotifyCommand", "RaxxAPNs", "RaxxCLI", "RaxxCore", "RaxxAPI", "RaxxStore",
                                                                   "RaxxClient", "RaxxPush", "RaxxVault", "RaxxSecrets", "RaxxWire", "RaxxTestSupport",
                                                                   .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "RaxxCacheCommandTests", dependencies: ["RaxxWire", "RaxxCacheCommand", "RaxxCLI", "RaxxCore", "RaxxAPI", "RaxxStore", "RaxxVault",
                                                                  "RaxxClient", "RaxxTestSupport", argumentParser]),
        .testTarget(name: "RaxxAuthCommandTests", dependencies: ["RaxxWire", "RaxxAuthCommand", "RaxxCLI", "RaxxCore", "RaxxAPI", "RaxxVault", "RaxxSecrets", "RaxxClient",
                                                                 "RaxxTestSupport", argumentParser]),
        .testTarget(name: "RaxxDSRCommandTests", dependencies: ["RaxxWire", "RaxxDSRCommand", "RaxxDSR", "RaxxCLI", "RaxxCore", "RaxxAPI", "RaxxDomain",
                                                                "RaxxClient", "RaxxAge", "RaxxTestSupport", crypto]),
        .testTarget(name: "RaxxPushTests", dependencies: ["RaxxPush", "RaxxAPNs", "RaxxAPI", "RaxxCore", "RaxxClient", "RaxxTestSupport", crypto,
                                                         .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "RaxxAPNsEndpointTests", dependencies: ["RaxxAPNsEndpoint", "RaxxAPNs", crypto]),
        .testTarget(name: "EndToEndTests", dependencies: ["RaxxWire", "RaxxTestSupport", "RaxxCore", "RaxxStore", "RaxxAPNs", crypto]),
    ]
    + tool("raxx-auth", library: "RaxxAuthCommand", dependencies: ["RaxxWire", "RaxxCLI", "RaxxCore", "RaxxAPI", "RaxxDomain", "RaxxClient", "RaxxVault"])
    + tool("raxx-cache", library: "RaxxCacheCommand", dependencies: ["RaxxWire", "RaxxCLI", "RaxxCore", "RaxxDomain", "RaxxAPI",
                                                                      "RaxxClient", "RaxxStore"])
    + tool("raxx-order", library: "RaxxOrderCommand", dependencies: ["RaxxWire", "RaxxCLI", "RaxxCore", "RaxxDomain", "RaxxAPI",
                                                                      "RaxxClient", "RaxxStore", "RaxxOrders"])
    + tool("raxx-notify", library: "RaxxNotifyCommand", dependencies: ["RaxxWire", "RaxxCLI", "RaxxCore", "RaxxDomain", "RaxxAPI",
                                                                        "RaxxStore", "RaxxAPNs", "RaxxPush"])
    + tool("raxx-dsr", library: "RaxxDSRCommand", dependencies: ["RaxxWire", "RaxxCLI", "RaxxCore", "RaxxAPI", "RaxxDomain", "RaxxClient", "RaxxDSR"]),
    swiftLanguageModes: [.v6]
)

for target in package.targets where target.type != .test && target.name.lowercased().hasPrefix("raxx") {
    target.swiftSettings = (target.swiftSettings ?? []) + directMetadata
}
