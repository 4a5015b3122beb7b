// Package security holds Hadoop delegation tokens as tide uses them: the Token value, the
// Credentials file that YARN's NodeManager writes into every container and names in
// $HADOOP_TOKEN_FILE_LOCATION (Hadoop's "HDTS" Writable and protobuf formats), and the
// Writable variable-length integers that format is built on.
package security
