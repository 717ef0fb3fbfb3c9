// Command kafkabroker runs a single-node Kafka-protocol cluster on
// loopback for the Kafka scale-out tests (test/e2e/kafka_test.go): the
// in-memory cluster of github.com/twmb/franz-go/pkg/kfake, with fixed
// topics and partition counts, optionally kept in a directory so that a
// restarted broker has the records and the consumer groups' offsets of
// the one before. It is a test tool, not a Kafka to run anything on.
//
// It has its own go.mod so that kfake stays out of the module graph of
// the llm_eval module and of the otelcol-llmeval build.
//
//	kafkabroker -addr 127.0.0.1:9092 -partitions 6 -topics otlp_spans,otlp_logs -data DIR
//	kafkabroker -addr 127.0.0.1:9092 -produce otlp_spans -value 'not OTLP'
//
// The first form serves until SIGTERM or SIGINT and prints "ready ADDR"
// once it accepts connections. The second writes one record with the
// value to every partition of the topic and exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9092", "host:port to listen on (serve) or to connect to (-produce)")
	partitions := flag.Int("partitions", 6, "partitions of each topic")
	topics := flag.String("topics", "otlp_spans,otlp_logs", "comma-separated topics to create")
	data := flag.String("data", "", "directory that keeps records, offsets and groups across restarts (empty: in memory)")
	minSession := flag.Duration("min-session-timeout", time.Second, "smallest session_timeout a consumer may ask for")
	produce := flag.String("produce", "", "write -value to every partition of this topic on a running broker, then exit")
	value := flag.String("value", "", "the record value for -produce")
	flag.Parse()

	var err error
	if *produce != "" {
		err = produceEverywhere(*addr, *produce, *value)
	} else {
		err = serve(*addr, int32(*partitions), strings.Split(*topics, ","), *data, *minSession)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kafkabroker:", err)
		os.Exit(1)
	}
}

func serve(addr string, partitions int32, topics []string, data string, minSession time.Duration) error {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-addr: %w", err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return fmt.Errorf("-addr port: %w", err)
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(port),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			return net.Listen(network, net.JoinHostPort(host, strconv.Itoa(port)))
		}),
		kfake.SeedTopics(partitions, topics...),
		kfake.GroupMinSessionTimeout(minSession),
	}
	if data != "" {
		opts = append(opts, kfake.DataDir(data))
	}
	cluster, err := kfake.NewCluster(opts...)
	if err != nil {
		return err
	}
	fmt.Println("ready", cluster.ListenAddrs()[0])

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
	cluster.Close()
	return nil
}

// produceEverywhere writes value to each partition of topic and waits for
// the broker's acknowledgement of every record.
func produceEverywhere(addr, topic, value string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	n, err := partitionCount(ctx, cl, topic)
	if err != nil {
		return err
	}
	var errs []error
	for p := range n {
		r := &kgo.Record{Topic: topic, Partition: p, Value: []byte(value)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			errs = append(errs, fmt.Errorf("partition %d: %w", p, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Printf("produced %d records to %s\n", n, topic)
	return nil
}

func partitionCount(ctx context.Context, cl *kgo.Client, topic string) (int32, error) {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, fmt.Errorf("metadata of %s: %w", topic, err)
	}
	for _, t := range resp.Topics {
		if t.Topic != nil && *t.Topic == topic {
			if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
				return 0, fmt.Errorf("topic %s: %w", topic, err)
			}
			return int32(len(t.Partitions)), nil
		}
	}
	return 0, fmt.Errorf("topic %s not found", topic)
}
