package kafkatest

import "os"

var pid = os.Getpid()
