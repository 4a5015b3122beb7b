package examples

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/tidestream/tide/stream"
)

// TopSpeedWindowingName is the registered name of the car example.
const TopSpeedWindowingName = "TopSpeedWindowing"

// Parameters of TopSpeedWindowing (as in Flink's example).
const (
	// TriggerMeters: a car's window fires every time it has driven this far since the last firing.
	TriggerMeters = 50
	// EvictAfter: a firing considers only the car's events of the last 10 s (event time).
	EvictAfter = 10 * time.Second
	// EventInterval is the event-time distance between two events of one car.
	EventInterval = 100 * time.Millisecond
)

// CarEvent is one reading of a car.
type CarEvent struct {
	CarID    int
	Speed    int     // km/h
	Distance float64 // meters driven since the start
	Time     int64   // event time, ms
}

func (c CarEvent) String() string {
	return fmt.Sprintf("(%d,%d,%.2f,%d)", c.CarID, c.Speed, c.Distance, c.Time)
}

// CarEventCodec is the hand-written codec of CarEvent.
type CarEventCodec struct{}

func (CarEventCodec) Append(dst []byte, v CarEvent) []byte {
	dst = binary.AppendVarint(dst, int64(v.CarID))
	dst = binary.AppendVarint(dst, int64(v.Speed))
	dst = stream.Float64Codec{}.Append(dst, v.Distance)
	return binary.AppendVarint(dst, v.Time)
}

func (CarEventCodec) Decode(src []byte) (CarEvent, error) {
	d := stream.NewDecoder(src)
	v := CarEvent{CarID: int(d.Varint()), Speed: int(d.Varint()), Distance: d.Float64(), Time: d.Varint()}
	if d.Err() != nil {
		return v, fmt.Errorf("decoding CarEvent: %w", d.Err())
	}
	return v, nil
}

// carStep is the deterministic generator: each car starts at 50 km/h; every event its speed
// changes by ±5 (clamped to 0..100) chosen by a hash of (car, seq), and it drives
// speed/3.6 m/s for EventInterval. The partition state is the car's speed and distance.
func carStep(car int, seq int64, state []byte) (CarEvent, int64, []byte) {
	speed, distance := 50, 0.0
	if state != nil {
		d := stream.NewDecoder(state)
		speed, distance = int(d.Varint()), d.Float64()
	}
	h := uint64(car)*0x9e3779b97f4a7c15 ^ uint64(seq)*0xbf58476d1ce4e5b9
	h ^= h >> 31
	h *= 0x94d049bb133111eb
	h ^= h >> 29
	if h&1 == 1 {
		speed = min(100, speed+5)
	} else {
		speed = max(0, speed-5)
	}
	distance += float64(speed) / 3.6 * EventInterval.Seconds()
	ts := seq * EventInterval.Milliseconds()
	next := binary.AppendVarint(nil, int64(speed))
	next = stream.Float64Codec{}.Append(next, distance)
	return CarEvent{CarID: car, Speed: speed, Distance: distance, Time: ts}, ts, next
}

// TopSpeedState is one car's window: its events of the last EvictAfter and the distance at
// the last firing.
type TopSpeedState struct {
	LastTrigger float64
	Events      []CarEvent
}

type topSpeedCodec struct{}

func (topSpeedCodec) Append(dst []byte, s TopSpeedState) []byte {
	dst = stream.Float64Codec{}.Append(dst, s.LastTrigger)
	dst = binary.AppendUvarint(dst, uint64(len(s.Events)))
	for _, e := range s.Events {
		dst = CarEventCodec{}.Append(dst, e)
	}
	return dst
}

func (topSpeedCodec) Decode(src []byte) (TopSpeedState, error) {
	d := stream.NewDecoder(src)
	s := TopSpeedState{LastTrigger: d.Float64()}
	n := d.Uvarint()
	if n > uint64(len(src)) {
		return s, fmt.Errorf("decoding top-speed state: %d events in %d bytes", n, len(src))
	}
	for i := uint64(0); i < n && d.Err() == nil; i++ {
		s.Events = append(s.Events, CarEvent{CarID: int(d.Varint()), Speed: int(d.Varint()), Distance: d.Float64(), Time: d.Varint()})
	}
	if d.Err() != nil {
		return s, fmt.Errorf("decoding top-speed state: %w", d.Err())
	}
	return s, nil
}

// TopSpeedOnRecord is the per-car window logic, Flink's GlobalWindows + DeltaTrigger(50 m)
// + TimeEvictor(10 s) + maxBy(speed) written as keyed state: keep the car's events of the
// last 10 s; when the car has driven more than 50 m since the last firing, emit the event
// with the top speed among them.
func TopSpeedOnRecord(_ int, s *TopSpeedState, e CarEvent, ts int64, emit func(CarEvent, int64)) bool {
	s.Events = append(s.Events, e)
	cut := 0
	for cut < len(s.Events) && s.Events[cut].Time < e.Time-EvictAfter.Milliseconds() {
		cut++
	}
	s.Events = s.Events[cut:]
	if e.Distance-s.LastTrigger > TriggerMeters {
		top := s.Events[0]
		for _, x := range s.Events[1:] {
			if x.Speed > top.Speed {
				top = x
			}
		}
		s.LastTrigger = e.Distance
		emit(top, ts)
	}
	return true
}

// BuildTopSpeedWindowing builds Flink's TopSpeedWindowing: --cars cars (default 2) report
// their speed and distance every 100 ms of event time (at --rate events/s per source
// subtask, default 10 per car so it runs in real time; unbounded unless --records gives
// events per car); per car, every 50 m driven, the top speed of the last 10 s is emitted to
// the exactly-once file sink in --output, or printed.
func BuildTopSpeedWindowing(args []string) (*stream.Job, error) {
	a, err := parseArgs(TopSpeedWindowingName, args)
	if err != nil {
		return nil, err
	}
	if a.cars < 1 {
		return nil, fmt.Errorf("job %s: --cars %d, want >= 1", TopSpeedWindowingName, a.cars)
	}
	rate := a.rate
	if rate == 0 {
		rate = float64(a.cars) * 10
	}
	job := stream.NewJob(TopSpeedWindowingName, a.parallelism, a.maxParallel)
	cars := stream.GeneratorSource(job, "cars", stream.Generator[CarEvent]{
		Partitions: a.cars, PerPartition: a.records, Rate: rate, Next: carStep,
	}, stream.BoundedOutOfOrderness(0, func(e CarEvent) int64 { return e.Time })).WithCodec(CarEventCodec{})
	top := stream.KeyedProcess(stream.KeyBy(cars, func(e CarEvent) int { return e.CarID }), "top-speed",
		stream.KeyedFuncs[CarEvent, int, TopSpeedState, CarEvent]{OnRecord: TopSpeedOnRecord, StateCodec: topSpeedCodec{}}).
		WithCodec(CarEventCodec{})
	if a.output != "" {
		stream.FileSink(top, "sink", a.output, CarEvent.String)
	} else {
		stream.Print(top, "print", nil)
	}
	return job, nil
}

// NewTopSpeedState returns an empty per-car window state (for tests of TopSpeedOnRecord).
func NewTopSpeedState() *TopSpeedState { return &TopSpeedState{} }
