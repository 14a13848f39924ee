package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/lab/cpu"
	"github.com/sluice-upf/sluice/lab/gnb"
	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/topo"
)

// webKind runs the subscriber model with real connections at each count,
// through the UPF and then through the direct link.
type webKind struct{}

// Ports of the web load in the DN host and the UEs.
const (
	webPort   = 80
	udpUpPort = 9000 // the DN's, for the UEs' UDP
	udpDnPort = 9001 // the UEs', for the DN's UDP
)

// fetchInterval is how often a subscriber starts an HTTP exchange: each
// uploads its HTTP rate's worth of this time and downloads the same, so
// that seed 003's rates are kept by TCP, as far as TCP gets them.
const fetchInterval = time.Second

func (webKind) run(ctx context.Context, r *runner, st scenario.Step) error {
	w := st.Settings.(*scenario.Web)
	g, err := r.attachGNB(slices.Max(w.Counts))
	if err != nil {
		return err
	}
	defer g.Close()
	srv, err := serveWeb(r.lab)
	if err != nil {
		return err
	}
	defer srv.close()
	var out []report.WebLoad
	defer func() { r.run.AddWeb(st.Header(), out...) }()
	for _, n := range w.Counts {
		l, err := r.webOnce(ctx, g, srv, w, n, false)
		if err != nil {
			return err
		}
		if w.Ceiling {
			c, err := r.webOnce(ctx, g, srv, w, n, true)
			if err != nil {
				return err
			}
			l.Ceiling = &c
		}
		out = append(out, l)
	}
	return nil
}

// webOnce runs n subscribers for the step's duration, through the UPF or
// the direct link.
func (r *runner) webOnce(ctx context.Context, g *gnb.GNB, srv *webServer, w *scenario.Web, n int, direct bool) (report.WebLoad, error) {
	l := report.WebLoad{Subscribers: n}
	if err := usePath(g, direct); err != nil {
		return l, err
	}
	defer usePath(g, false)
	upHTTP, upUDP := scenario.Rates(w.Uplink)
	downHTTP, downUDP := scenario.Rates(w.Downlink)
	u, err := newUDPLoad(r.lab, g, n, upUDP, downUDP)
	if err != nil {
		return l, err
	}
	defer u.close()
	retxBefore, err := retransmits(r.lab, g)
	if err != nil {
		return l, err
	}
	srv.reset()
	sample, err := cpu.Start(r.upf.pid())
	if err != nil {
		return l, err
	}
	runCtx, cancel := context.WithTimeout(ctx, w.Duration)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	wg.Go(func() { u.send(runCtx) })
	fetches := make([][]time.Duration, n)
	failed := make([]int, n)
	var downloaded atomic.Uint64
	up, down := int(upHTTP/8*fetchInterval.Seconds()), int(downHTTP/8*fetchInterval.Seconds())
	for i := range n {
		wg.Go(func() { fetches[i], failed[i] = subscriber(runCtx, g, i, up, down, &downloaded) })
	}
	wg.Wait()
	l.Seconds = time.Since(start).Seconds()
	if usage, err := sample.Stop(); err == nil {
		l.CPU = report.CPUOf(usage)
	}
	time.Sleep(drain) // what is on its way arrives
	retxAfter, err := retransmits(r.lab, g)
	if err != nil {
		return l, err
	}
	var times []time.Duration
	for i := range n {
		times, l.FailedFetches = append(times, fetches[i]...), l.FailedFetches+failed[i]
	}
	l.Fetches = len(times)
	l.FetchP50Ms, l.FetchP99Ms = percentileMs(times, 50), percentileMs(times, 99)
	l.Uplink = webDirection(scenario.Uplink, srv.received.Load(), &u.up, l.Seconds, n, w.Uplink, retxAfter[0]-retxBefore[0])
	l.Downlink = webDirection(scenario.Downlink, downloaded.Load(), &u.down, l.Seconds, n, w.Downlink, retxAfter[1]-retxBefore[1])
	path := "UPF"
	if direct {
		path = "ceiling"
	}
	r.progress("  %d subscribers, %s: up %.3f Gbit/s (UDP loss %.3f%%), down %.3f Gbit/s (UDP loss %.3f%%), %d fetches, p99 %.1f ms, %d failed",
		n, path, l.Uplink.Gbps, l.Uplink.LossPct, l.Downlink.Gbps, l.Downlink.LossPct, l.Fetches, l.FetchP99Ms, l.FailedFetches)
	return l, nil
}

func webDirection(dir scenario.Direction, httpBytes uint64, f *udpFlow, seconds float64, n int, flows []scenario.Flow, retx uint64) report.WebDirection {
	d := report.WebDirection{Direction: string(dir), UDPSent: f.sent.Load(), UDPReceived: f.received.Load(), Retransmits: retx}
	d.HTTPGbps = 8 * float64(httpBytes) / seconds / 1e9
	d.Gbps = d.HTTPGbps + 8*float64(f.receivedBytes.Load())/seconds/1e9
	for _, fl := range flows {
		d.OfferedGbps += fl.Rate.BPS * float64(n) / 1e9
	}
	if d.UDPSent > 0 && d.UDPReceived < d.UDPSent {
		d.LossPct = 100 * float64(d.UDPSent-d.UDPReceived) / float64(d.UDPSent)
	}
	return d
}

func percentileMs(list []time.Duration, p int) float64 {
	if len(list) == 0 {
		return 0
	}
	slices.Sort(list)
	return ms(list[min(len(list)*p/100, len(list)-1)])
}

// subscriber is subscriber i: an HTTP exchange every fetchInterval (at
// once after one that took longer) until ctx ends, each uploading up
// bytes and downloading down. It returns the exchanges' times and how
// many failed; what it downloaded adds to downloaded as it comes.
func subscriber(ctx context.Context, g *gnb.GNB, i, up, down int, downloaded *atomic.Uint64) (times []time.Duration, failed int) {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return g.Dial(ctx, i, network, addr)
		},
		MaxIdleConnsPerHost: 1, DisableCompression: true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	url := fmt.Sprintf("http://%s/?bytes=%d", netip.AddrPortFrom(topo.DNHost, webPort), down)
	body := bytes.Repeat([]byte{'u'}, up)
	// Spread the subscribers' first exchanges over the interval.
	next := time.Now().Add(time.Duration(i) * fetchInterval / 997 % fetchInterval)
	for {
		select {
		case <-ctx.Done():
			return times, failed
		case <-time.After(time.Until(next)):
		}
		start := time.Now()
		next = start.Add(fetchInterval)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		resp, err := client.Do(req)
		if err == nil {
			var got int64
			got, err = io.Copy(countingDiscard{downloaded}, resp.Body)
			resp.Body.Close()
			if err == nil && got != int64(down) {
				err = fmt.Errorf("%d bytes of %d", got, down)
			}
		}
		switch {
		case ctx.Err() != nil:
			return times, failed // cut by the end of the load: neither
		case err != nil:
			failed++
		default:
			times = append(times, time.Since(start))
		}
	}
}

type countingDiscard struct{ n *atomic.Uint64 }

func (c countingDiscard) Write(b []byte) (int, error) {
	c.n.Add(uint64(len(b)))
	return len(b), nil
}

// webServer is the lab's web server in the DN: it takes the body of a
// request and answers with as many bytes as ?bytes= asks.
type webServer struct {
	srv      *http.Server
	received atomic.Uint64 // request bodies, since reset
}

func serveWeb(lab topo.Lab) (*webServer, error) {
	w := &webServer{}
	page := bytes.Repeat([]byte{'d'}, 64<<10)
	w.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		n, _ := io.Copy(io.Discard, req.Body)
		w.received.Add(uint64(n))
		size, err := strconv.Atoi(req.URL.Query().Get("bytes"))
		if err != nil || size < 0 {
			http.Error(rw, "want ?bytes=N", http.StatusBadRequest)
			return
		}
		rw.Header().Set("Content-Length", strconv.Itoa(size))
		for size > 0 {
			k, err := rw.Write(page[:min(size, len(page))])
			if err != nil {
				return
			}
			size -= k
		}
	})}
	var l net.Listener
	err := lab.Do(lab.DN, func() (err error) {
		l, err = net.Listen("tcp", netip.AddrPortFrom(topo.DNHost, webPort).String())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("web server in the DN: %w", err)
	}
	go w.srv.Serve(l)
	return w, nil
}

func (w *webServer) reset() { w.received.Store(0) }
func (w *webServer) close() { w.srv.Close() }

// retransmits are the TCP segments sent again by the UEs' stacks and by
// the DN's, since they were made (/proc/net/snmp of each namespace).
func retransmits(lab topo.Lab, g *gnb.GNB) ([2]uint64, error) {
	var out [2]uint64
	for i, ns := range []string{g.Namespace(), lab.DN} {
		err := netns.Do(ns, func() (err error) {
			out[i], err = snmpTCP("RetransSegs")
			return err
		})
		if err != nil {
			return out, fmt.Errorf("TCP retransmissions in %s: %w", ns, err)
		}
	}
	return out, nil
}

// snmpTCP reads a TCP counter of the calling thread's namespace.
func snmpTCP(name string) (uint64, error) {
	f, err := os.Open("/proc/thread-self/net/snmp")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var header []string
	for s := bufio.NewScanner(f); s.Scan(); {
		fields := strings.Fields(s.Text())
		if len(fields) == 0 || fields[0] != "Tcp:" {
			continue
		}
		if header == nil {
			header = fields
			continue
		}
		if i := slices.Index(header, name); i > 0 && i < len(fields) {
			return strconv.ParseUint(fields[i], 10, 64)
		}
	}
	return 0, errors.New("no Tcp: " + name)
}
