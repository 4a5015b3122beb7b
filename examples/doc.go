// Package examples holds the example jobs of the stock tide binary. Importing the package
// registers them with stream.Register: TopSpeedWindowing, WordCount, CheckableCount and
// KafkaCount.
//
// Every job takes flag-style arguments (--records N --keys K --rate R --output DIR
// --input DIR --parallelism P); see each job's doc for the ones it reads.
package examples

import "github.com/tidestream/tide/stream"

func init() {
	stream.Register(CheckableCountName, BuildCheckableCount)
	stream.Register(WordCountName, BuildWordCount)
	stream.Register(TopSpeedWindowingName, BuildTopSpeedWindowing)
	stream.Register(KafkaCountName, BuildKafkaCount)
}
