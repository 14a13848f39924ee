package smf

import (
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"
)

// heartbeats asks the UPF whether it is there every cfg.Heartbeat, until
// Close, and notes a new Recovery Time Stamp: the UPF restarted.
func (c *Client) heartbeats() {
	defer c.wg.Done()
	tick := time.NewTicker(c.cfg.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-c.life.Done():
			return
		case <-tick.C:
			c.heartbeat()
		}
	}
}

// heartbeat sends one Heartbeat Request and waits for it to end, N1 T1s at
// the most, or until Close.
func (c *Client) heartbeat() {
	m, err := c.ask(c.life, message.NewHeartbeatRequest(0, ie.NewRecoveryTimeStamp(c.recovery), nil))
	if err != nil {
		if c.life.Err() == nil {
			c.bump(&c.counters.HeartbeatsLost)
		}
		return
	}
	c.bump(&c.counters.HeartbeatsAnswered)
	r, ok := m.(*message.HeartbeatResponse)
	if !ok || r.RecoveryTimeStamp == nil {
		return
	}
	ts, err := r.RecoveryTimeStamp.RecoveryTimeStamp()
	if up := c.UPF(); err == nil && !up.Recovery.IsZero() && !ts.Equal(up.Recovery) {
		c.bump(&c.counters.UPFRestarts)
	}
}
