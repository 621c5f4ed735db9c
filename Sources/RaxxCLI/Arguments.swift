// The domain values' argument conformances (durations, the order and alert enums) come with the
// command layer: every command module that parses them imports RaxxCLI.
@_exported import RaxxArguments
