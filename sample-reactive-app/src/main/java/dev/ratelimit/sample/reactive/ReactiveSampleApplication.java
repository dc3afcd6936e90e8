package dev.ratelimit.sample.reactive;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The reactive sample: a WebFlux service limited by the starter, with a route
 * rule on {@code /api/**} and annotated handlers returning {@code Mono} and
 * {@code Flux} (see {@code application.yml}).
 */
@SpringBootApplication
public class ReactiveSampleApplication {

	/**
	 * Starts the sample.
	 * @param args the command line
	 */
	public static void main(String[] args) {
		SpringApplication.run(ReactiveSampleApplication.class, args);
	}

}
