//go:build hooks

package clientbench

import (
	"context"
	"net"
	"os"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// calls counts every command the hook sees, so the hook does real work per call.
var calls atomic.Int64

// countingHook is a client hook of the kind tracing libraries install: it wraps every
// command (and pipeline) in a function call. With RESPLAB_HOOK=active it also reads
// each command's name, as a tracer that names its spans would; otherwise it only
// passes the call on ("dormant": installed but idle).
type countingHook struct{ active bool }

func (countingHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return next(ctx, network, addr)
	}
}

func (h countingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.active {
			calls.Add(int64(len(cmd.FullName())))
		}
		return next(ctx, cmd)
	}
}

func (h countingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.active {
			for _, c := range cmds {
				calls.Add(int64(len(c.FullName())))
			}
		}
		return next(ctx, cmds)
	}
}

// instrument installs the hook: the "hooks" build.
func instrument(c *redis.Client) {
	c.AddHook(countingHook{active: os.Getenv("RESPLAB_HOOK") == "active"})
}
