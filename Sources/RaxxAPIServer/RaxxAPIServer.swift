// The Raptor API's server side: the routing and (de)serialisation of every operation onto an
// `APIProtocol`, generated at build time from Spec/openapi.yaml (symlinked here) by the
// swift-openapi-generator build plugin. Only the sandbox links it: the tools link RaxxAPI's types
// and client, not the server stubs.
