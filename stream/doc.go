// Package stream is tide's job API: a job is a graph of sources, operators and sinks built
// with typed helpers (Map, Filter, FlatMap, KeyBy, Reduce, Aggregate, TumblingWindow,
// KeyedProcess) and registered by name so the same binary can run as AM and TaskManager.
//
//	FromSource ──► Map/Filter/FlatMap ──► KeyBy ══HASH══► Reduce/Window ──► Sink
//	 (FLIP-27 split source)   chained into one vertex         another vertex
//
// Operators that are connected forward and run at the same parallelism are chained into
// one job vertex (one subtask runs the whole chain in one goroutine). A KeyBy starts a new
// vertex fed by a HASH edge: records are routed by the key group of their key, so keyed
// state written at one parallelism can be restored at any other up to maxParallelism.
//
// Records are Go values inside a vertex and bytes between vertices: every stream carries a
// Codec (CodecFor picks a fast one for built-in types, gob otherwise; jobs may supply
// hand-written codecs for throughput).
//
// Sources follow FLIP-27: a SplitEnumerator runs in the AM's source coordinator and hands
// out Splits on request; a SourceReader in each source subtask reads the splits it owns and
// reports their progress in every checkpoint.
package stream
