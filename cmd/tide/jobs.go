package main

// The stock binary carries the example jobs; importing the package registers them
// (TopSpeedWindowing, WordCount, CheckableCount).
import _ "github.com/tidestream/tide/examples"
