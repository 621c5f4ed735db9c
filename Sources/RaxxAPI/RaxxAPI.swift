// The Raptor API model: types and client generated at build time from Spec/openapi.yaml (symlinked
// here) by the swift-openapi-generator build plugin. Change the spec, never the generated code.
// Everything hand-written about the wire (the date transcoder, the fast readers and writers, JSON
// Lines) is in RaxxWire, beside this model and checked against it.
