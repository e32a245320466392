package objstore

// ParseS3URLWithEnv is ParseS3URL reading the environment through getenv,
// so parallel tests need not change the process environment.
var ParseS3URLWithEnv = parseS3URL
