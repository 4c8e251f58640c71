/// An edit the session refused (a region, marker, range, tempo, routing, track or automation
/// change), saying why in one line for the user: what every front-end shows, the command
/// line after its command's name.
public protocol EditRefusal: Error, CustomStringConvertible {}
