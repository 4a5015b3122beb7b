// Package yarn talks to Apache Hadoop YARN without Java: typed clients for the three
// protocols a per-job application needs, over tide's own Hadoop IPC client (internal/hadoop/ipc, which storage/ also uses for lease recovery).
//
//	tide run ──ClientRM──► ResourceManager client port (SIMPLE auth)
//	                         getNewApplication, submitApplication, getApplicationReport, …
//	AM ────────AMRM──────► ResourceManager scheduler port (SASL with the AMRMToken)
//	                         registerApplicationMaster, allocate (+ updateBlacklist), finish
//	AM ────────NM────────► each NodeManager (SASL with that node's NMToken)
//	                         startContainers, stopContainers, getContainerStatuses
//
// The AM reads its AMRMToken from the credentials file YARN writes into its container
// (security.LoadCredentialsFromEnv); NMTokens arrive in allocate responses, once per node,
// and are kept in an NMTokenCache that AMRM fills and NM reads.
//
// On top of them: Submit and Follow (tide run --target yarn-per-job: staging upload to
// HDFS, AM container, progress until RUNNING or the end) and Driver, the drivers.Driver
// that heartbeats allocate, asks for TaskManager containers as absolute asks, launches
// them through the NodeManagers (TaskManagerLaunch), reports completed containers at once
// and keeps YARN's application blacklist in step with the AM's blocklist.
//
// Across AM attempts (yarn.application-attempts > 1) the TaskManager containers stay:
// Submit asks YARN to keep them, every attempt publishes its RPC address in the staging
// directory (StagingStore, <staging>/<appId>/am-address) where the TaskManagers look when
// they lose the AM, and the driver of the next attempt adopts the containers YARN hands
// back at registration (naming their TaskManagers from <staging>/<appId>/containers/).
// The AM removes the staging directory once the application succeeded or was cancelled,
// unless it holds the checkpoint the job keeps (Driver.Keep).
package yarn
