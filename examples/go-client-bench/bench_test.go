// Package clientbench measures a Redis client library against a live server: the
// round trip of one SET and one GET, and a pipeline of 16 GETs. The server's address
// comes from RESPLAB_ADDR (host:port), which the resplab experiment fills in.
//
// The variant under test is chosen at build time by the experiment's setup hooks
// (examples/client-library.toml): the same benchmark, built three ways.
package clientbench

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
)

func client(b *testing.B) *redis.Client {
	addr := os.Getenv("RESPLAB_ADDR")
	if addr == "" {
		b.Skip("RESPLAB_ADDR is not set (host:port of the server to measure)")
	}
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 4})
	instrument(c)
	if err := c.Ping(context.Background()).Err(); err != nil {
		b.Fatalf("ping %s: %v", addr, err)
	}
	b.Cleanup(func() { _ = c.Close() })
	return c
}

func BenchmarkSet(b *testing.B) {
	c := client(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.Set(ctx, "bench:set", "value-0123456789", 0).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	c := client(b)
	ctx := context.Background()
	if err := c.Set(ctx, "bench:get", "value-0123456789", 0).Err(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.Get(ctx, "bench:get").Err(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPipelineGet16(b *testing.B) {
	c := client(b)
	ctx := context.Background()
	keys := make([]string, 16)
	for i := range keys {
		keys[i] = "bench:p:" + strconv.Itoa(i)
		if err := c.Set(ctx, keys[i], i, 0).Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := c.Pipeline()
		for _, k := range keys {
			p.Get(ctx, k)
		}
		if _, err := p.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16), "ns/key")
}
