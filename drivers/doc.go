// Package drivers defines how the AM talks to the cluster it runs on: the Driver
// interface every resource manager integration implements (YARN, Kubernetes,
// standalone), the events drivers send back, and a registry of drivers by name.
//
//	am event loop ──RequestWorker/ReleaseWorker/Deregister──► Driver ──► cluster RM
//	      ▲                                                     │
//	      └──── EventHandler (worker terminated, fatal error) ◄─┘
//
// Every implementation runs drivers/drivertest.Suite in its own tests.
package drivers
