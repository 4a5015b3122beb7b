package yarn

// Hadoop protocol names, sent in the connection context and in every call header.
const (
	ProtocolApplicationClient   = "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB"
	ProtocolApplicationMaster   = "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB"
	ProtocolContainerManagement = "org.apache.hadoop.yarn.api.ContainerManagementProtocolPB"
)

// Java exception classes tide maps to its own errors.
const (
	classInvalidResourceRequest  = "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException"
	classApplicationNotFound     = "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException"
	classAMNotRegistered         = "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException"
	classInvalidAMRequest        = "org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException"
	classInvalidBlacklistRequest = "org.apache.hadoop.yarn.exceptions.InvalidResourceBlacklistRequestException"
	classInvalidContainerRequest = "org.apache.hadoop.yarn.exceptions.InvalidContainerException"
)
