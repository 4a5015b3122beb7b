// Package api is tide's public Go client for the AM's REST API and the one set of request
// and response types that the REST server, the tide CLI, the tests and users share. It
// imports only the standard library, so a program that watches or operates tide jobs can
// use it without pulling in the AM.
//
//	c, err := api.NewClient(api.Config{Address: "localhost:8081"})
//	jobs, err := c.Jobs(ctx)                 // GET /jobs/overview
//	job, err := c.Job(ctx, jobs[0].JID)      // GET /jobs/:jobid
//
// Paths and JSON field names are Flink's where Flink has them. Errors are
// *UnreachableError (nothing answered at the address) or *StatusError (the AM answered
// with a status other than 2xx, carrying Flink's {"errors": [...]} messages).
package api
