package websocket

// AcceptKeyForTest exposes acceptKey to the external tests.
var AcceptKeyForTest = acceptKey
