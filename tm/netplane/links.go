package netplane

import "fmt"

// producerLink is how an Output reaches its consumer: over a TCP connection
// (remoteProducerLink) or straight into an Input of the same plane
// (localProducerLink). Output calls it while holding its own lock.
type producerLink interface {
	sendData(buf []byte, side any) // ownership of buf and its side car (local links only) pass to the link
	sendEnd()
	sendReset(cause error)
}

// consumerLink is how an Input reaches its producer. Input never calls it
// while holding its own lock.
type consumerLink interface {
	grantCredit(n int)
	reject(cause error)
}

// localProducerLink short-circuits an Output into an Input of the same plane.
type localProducerLink struct{ in *Input }

func (l localProducerLink) sendData(buf []byte, side any) {
	if err := l.in.deliver(buf, side); err != nil {
		l.in.fail(err, true)
	}
}

func (l localProducerLink) sendEnd() { l.in.end() }

func (l localProducerLink) sendReset(cause error) {
	l.in.fail(fmt.Errorf("channel %s: %w by producer: %w", l.in.id, ErrChannelReset, cause), false)
}

// localConsumerLink returns credits of a same-plane Input to its Output.
type localConsumerLink struct{ out *Output }

func (l localConsumerLink) grantCredit(n int) { l.out.addCredit(n) }

func (l localConsumerLink) reject(cause error) {
	l.out.fail(fmt.Errorf("channel %s: %w by consumer: %w", l.out.id, ErrChannelReset, cause), false)
}

// remoteProducerLink sends an Output's frames over a dialed connection.
type remoteProducerLink struct {
	c      *conn
	stream uint32
}

func (l remoteProducerLink) sendData(buf []byte, _ any) { // no side car: Output.WriteSides is local only
	l.c.enqueue(outFrame{typ: frameData, stream: l.stream, payload: buf, pooled: true})
}

func (l remoteProducerLink) sendEnd() {
	l.c.removeOutput(l.stream)
	l.c.enqueue(outFrame{typ: frameEnd, stream: l.stream})
}

func (l remoteProducerLink) sendReset(cause error) {
	l.c.removeOutput(l.stream)
	l.c.reset(l.stream, cause)
}

// remoteConsumerLink sends an Input's credits back over an accepted connection.
type remoteConsumerLink struct {
	c      *conn
	stream uint32
}

func (l remoteConsumerLink) grantCredit(n int) {
	l.c.enqueue(outFrame{typ: frameCredit, stream: l.stream, payload: appendCredit(nil, n)})
}

func (l remoteConsumerLink) reject(cause error) {
	l.c.removeInput(l.stream)
	l.c.reset(l.stream, cause)
}
