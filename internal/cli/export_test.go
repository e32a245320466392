package cli

// LockHomeForTest is lockHome, for the tests of package cli_test.
var LockHomeForTest = lockHome
